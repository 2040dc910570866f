/**
 * Durable checkpoint directories and preemption (issue 30), with real processes: a real python3
 * training program (fixtures/checkpoint/train.py) that writes one checkpoint per epoch into
 * $CAIRN_CHECKPOINT_DIR and resumes from the latest; runners in child processes
 * (fixtures/checkpoint-runner.mjs, on the built dist/) SIGKILLed or paused (SIGSTOP) mid-step.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { apply, command, hasCode, lower, OUT, type StepContext, type StepSpec } from '@cairn/core';
import { type JobRecord, localLayout, run, StepRunner, type StepRunError } from '../src/index.js';
import { attemptDir, jobFile, leaseFile, stagedAt } from '../src/store/local/layout.js';
import { Graph } from './helpers/graph.js';
import { scriptedExecutor } from './helpers/scripted-executor.js';
import { spawnReporting } from '../../../tools/testenv/reporting-child.js';
import { pidOf, progress } from '../../../tools/testenv/train-progress.js';

const pkg = fileURLToPath(new URL('..', import.meta.url));
const FIXTURE = join(pkg, 'test/fixtures/checkpoint');
const RUNNER = join(pkg, 'test/fixtures/checkpoint-runner.mjs');

beforeAll(() => {
  if (!existsSync(join(pkg, 'dist/index.js'))) execFileSync('npx', ['tsup'], { cwd: pkg, stdio: 'ignore' });
  if (!existsSync(join(pkg, '../core/dist/index.js'))) execFileSync('npx', ['tsup'], { cwd: join(pkg, '../core'), stdio: 'ignore' });
}, 120_000);

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

const quiet = { info() {}, warn() {}, error() {} };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function scratch(): { dir: string; prefix: string; work: string } {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-ckpt-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const work = join(dir, 'work');
  mkdirSync(work);
  return { dir, prefix: join(dir, 'store'), work };
}

async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(20);
  }
}

/** The train step (same identity whatever its runtime settings). */
function trainStep(runtime: Record<string, unknown>, extra: Record<string, unknown> = {}): StepSpec {
  return lower(command({ name: 'train', version: 'v1', program: 'python3', args: ['train.py'], sources: ['train.py'], dir: FIXTURE, runtime, ...extra }));
}

const record = (path: string) => JSON.parse(readFileSync(join(path, '.artifact.json'), 'utf8')) as { attempts?: { state: string }[]; result: unknown };
/** Files the program wrote into the output (not Cairn's). */
const madeBy = (path: string) => readdirSync(path).filter((n) => n.startsWith('made-by-'));

/** A checkpoint-runner child. */
function child(config: Record<string, unknown>) {
  const c = spawnReporting(process.execPath, [RUNNER, JSON.stringify(config)]);
  cleanups.push(() => c.proc.kill('SIGKILL'));
  return c;
}

const killQuietly = (pid: number, signal: NodeJS.Signals) => {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
};

describe('checkpoint directories', () => {
  it('a retry after a crash resumes from the checkpoints the failed attempt left; the output holds one attempt’s files; success removes them', async () => {
    const { prefix, work } = scratch();
    const spec = trainStep({ work, epochs: 4, crashAt: 2 }, { retries: 1 });
    const [r] = await run(spec, { prefix, logger: quiet });
    expect(r?.value).toMatchObject({ resumedFrom: 2 });
    const lines = progress(work);
    // Attempt 1 wrote 1 and 2 and crashed; attempt 2 wrote 3 and 4, in the same directory.
    expect(lines.map((l) => l.epoch)).toEqual([1, 2, 3, 4]);
    expect(new Set(lines.map((l) => l.dir)).size).toBe(1);
    expect(lines[0]?.dir.startsWith(localLayout.checkpointRoot(spec.outputPath(prefix)))).toBe(true);
    expect(madeBy(r?.path as string)).toHaveLength(1);
    expect(record(r?.path as string).attempts?.map((a) => a.state)).toEqual(['failed', 'succeeded']);
    expect(existsSync(localLayout.checkpointRoot(spec.outputPath(prefix)))).toBe(false);
  }, 60_000);

  it('keepCheckpoints keeps them after success, outside the output', async () => {
    const { prefix, work } = scratch();
    const spec = trainStep({ work, epochs: 2 }, { keepCheckpoints: true });
    const [r] = await run(spec, { prefix, logger: quiet });
    const root = localLayout.checkpointRoot(spec.outputPath(prefix));
    expect(readdirSync(root)).toEqual(['gen-1']);
    expect(readdirSync(join(root, 'gen-1')).sort()).toEqual(['epoch-1', 'epoch-2']);
    expect(readdirSync(r?.path as string).filter((n) => n.startsWith('epoch'))).toEqual([]);
  }, 60_000);

  it('a checkpoint directory that cannot be created fails the step with CAIRN_CHECKPOINT naming it, before the program starts', async () => {
    const { prefix, work } = scratch();
    const spec = trainStep({ work, epochs: 1 });
    const root = localLayout.checkpointRoot(spec.outputPath(prefix));
    mkdirSync(join(root, '..'), { recursive: true });
    writeFileSync(root, 'not a directory');
    const err = (await run(spec, { prefix, logger: quiet }).catch((e: unknown) => e)) as StepRunError;
    expect(hasCode(err, 'CAIRN_STEP_FAILED')).toBe(true);
    const cause = err.failures[0]?.error;
    expect(hasCode(cause, 'CAIRN_CHECKPOINT')).toBe(true);
    expect(String((cause as Error).message)).toMatch(/^Step "train": cannot create the checkpoint directory/);
    expect(existsSync(join(work, 'pid-1'))).toBe(false);
  }, 60_000);

  it('a step that keeps its checkpoints, on a store that cannot be written, is refused before anything runs, naming the step', async () => {
    const { dir, work } = scratch();
    writeFileSync(join(dir, 'not-a-dir'), '');
    const spec = trainStep({ work, epochs: 1 }, { keepCheckpoints: true });
    const err = (await run(spec, { prefix: join(dir, 'not-a-dir', 'store'), logger: quiet }).catch((e: unknown) => e)) as Error;
    expect(hasCode(err, 'CAIRN_STORE')).toBe(true);
    expect(err.message).toMatch(/^Step "train" is not built and must run, but: .*not writable.*Nothing was run\./s);
    expect(existsSync(join(work, 'pid-1'))).toBe(false);
  }, 60_000);

  it('a runner SIGKILLed after checkpoint 3 of 5: the rerun resumes at 3, and the output holds one attempt’s files', async () => {
    const { prefix, work } = scratch();
    const runtime = { work, epochs: 5, pause: 0.3, waitAt: 3 };
    const a = child({ prefix, runtime });
    await until(() => progress(work).some((l) => l.epoch === 3), 30_000, 'checkpoint 3');
    // The machine goes down: the runner and its program die at once.
    const program = pidOf(work, 1);
    a.proc.kill('SIGKILL');
    killQuietly(-program, 'SIGKILL');
    await a.done;
    const b = child({ prefix, runtime: { ...runtime, waitAt: undefined } });
    expect(await b.done).toMatchObject({ ok: true, counts: { succeeded: 1 } });
    const path = (b.output().match(/^PATH (.*)$/m) as RegExpMatchArray)[1] as string;
    const model = JSON.parse(readFileSync(join(path, 'model.json'), 'utf8')) as { resumedFrom: number };
    expect(model.resumedFrom).toBe(3);
    expect(progress(work).map((l) => l.epoch)).toEqual([1, 2, 3, 4, 5]);
    expect(madeBy(path)).toHaveLength(1);
    expect(existsSync(localLayout.checkpointRoot(path))).toBe(false);
  }, 60_000);

  it('a paused runner whose lease was taken over writes after SIGCONT only into a generation nobody reads', async () => {
    const { prefix, work } = scratch();
    const timing = { heartbeatMs: 200, staleMs: 1500 };
    const a = child({ prefix, runtime: { work, epochs: 5, pause: 0.3 }, ...timing });
    await until(() => progress(work).some((l) => l.epoch === 2), 30_000, 'checkpoint 2');
    const programA = pidOf(work, 1);
    // A frozen VM: the runner and its program stop together.
    killQuietly(-programA, 'SIGSTOP');
    a.proc.kill('SIGSTOP');
    cleanups.push(() => killQuietly(-programA, 'SIGKILL'));
    const byA = progress(work).filter((l) => l.by.endsWith(`-${programA}`));
    const genA = byA[0]?.dir as string;
    const doneByA = Math.max(...byA.map((l) => l.epoch));
    await sleep(timing.staleMs + 500);
    const b = child({ prefix, runtime: { work, epochs: 5, pause: 1.2 }, ...timing });
    await until(() => b.output().includes('taking over the stale lease') && progress(work).some((l) => !l.by.endsWith(`-${programA}`)), 30_000, 'runner B to take over and write');
    const genB = progress(work).find((l) => !l.by.endsWith(`-${programA}`))?.dir as string;
    expect(genB).not.toBe(genA);
    // A's program wakes up and writes its next checkpoint (the zombie write), then A's runner.
    killQuietly(-programA, 'SIGCONT');
    await until(() => progress(work).some((l) => l.by.endsWith(`-${programA}`) && l.epoch === doneByA + 1), 30_000, 'the zombie to write');
    // B's generation holds A's checkpoints from before the takeover and B's own, nothing A wrote after.
    for (const n of readdirSync(genB).filter((x) => x.startsWith('epoch-'))) {
      const c = JSON.parse(readFileSync(join(genB, n), 'utf8')) as { epoch: number; by: string };
      if (c.by.endsWith(`-${programA}`)) expect(c.epoch).toBeLessThanOrEqual(doneByA);
    }
    expect(existsSync(join(genA, `epoch-${doneByA + 1}`))).toBe(true);
    a.proc.kill('SIGCONT');
    expect(await a.done).toMatchObject({ ok: false, cause: 'CAIRN_LEASE_LOST' });
    expect(await b.done).toMatchObject({ ok: true, counts: { succeeded: 1 } });
    const path = (b.output().match(/^PATH (.*)$/m) as RegExpMatchArray)[1] as string;
    const model = JSON.parse(readFileSync(join(path, 'model.json'), 'utf8')) as { resumedFrom: number; by: string };
    expect(model.resumedFrom).toBe(doneByA);
    expect(model.by.endsWith(`-${programA}`)).toBe(false);
    expect(madeBy(path)).toEqual([`made-by-${model.by}`]);
  }, 90_000);
});

describe('checkpoint directories of function steps and adopted jobs', () => {
  it('ctx.checkpointDir: a retry sees what the failed attempt left there; the output does not', async () => {
    const { prefix } = scratch();
    const seen: string[][] = [];
    const step = apply({
      name: 'fit',
      version: 'v1',
      retries: 1,
      inputs: { out: OUT },
      fn: (i: { out: string }, ctx: StepContext) => {
        const dir = ctx.checkpointDir as string;
        seen.push(readdirSync(dir));
        writeFileSync(join(dir, `ckpt-${ctx.attempt}`), 'x');
        if (ctx.attempt === 1) throw new Error('crashed after a checkpoint');
        writeFileSync(join(i.out, 'model'), 'done');
      },
    });
    const [r] = await run(step, { prefix, logger: quiet });
    expect(seen).toEqual([[], ['ckpt-1']]);
    expect(readdirSync(r?.path as string).filter((n) => !n.startsWith('.'))).toEqual(['model']);
    expect(existsSync(localLayout.checkpointRoot(r?.path as string))).toBe(false);
  }, 60_000);

  it('lazy: a step that never asks for ctx.checkpointDir gets no checkpoint directory; one that asks gets it then', async () => {
    const { prefix } = scratch();
    const roots: Record<string, string> = {};
    const seen: Record<string, boolean[]> = {};
    const probe = (name: string, ask: boolean) =>
      apply({
        name,
        version: 'v1',
        inputs: {},
        fn: (_i: unknown, ctx: StepContext) => {
          const before = existsSync(roots[name] as string);
          seen[name] = ask ? [before, existsSync(ctx.checkpointDir as string)] : [before];
        },
      });
    const steps = [probe('never-asks', false), probe('asks', true)];
    for (const spec of lower(steps)) roots[spec.name] = localLayout.checkpointRoot(spec.outputPath(prefix));
    const summary = await new StepRunner({ prefix, logger: quiet }).run(steps);
    expect(summary.counts).toEqual({ succeeded: 2 });
    expect(seen).toEqual({ 'never-asks': [false], asks: [false, true] });
    expect(existsSync(roots['never-asks'] as string)).toBe(false);
    expect(existsSync(roots.asks as string)).toBe(false);
  }, 60_000);

  it('an earlier run\'s checkpoints of a step that does not ask for them this time are removed at its success', async () => {
    const { prefix } = scratch();
    const step = apply({ name: 'plain', version: 'v1', inputs: {}, fn: () => 1 });
    const [spec] = lower([step]);
    const root = localLayout.checkpointRoot((spec as StepSpec).outputPath(prefix));
    mkdirSync(join(root, 'gen-2'), { recursive: true });
    writeFileSync(join(root, 'gen-2', 'ckpt-1'), 'left by a crashed run');
    const summary = await new StepRunner({ prefix, logger: quiet }).run([step]);
    expect(summary.counts).toEqual({ succeeded: 1 });
    expect(existsSync(root)).toBe(false);
  }, 60_000);

  it('an adopted job keeps the generation it was started with, and so does the retry after it', async () => {
    const prefix = mkdtempSync(join(tmpdir(), 'cairn-ckpt-adopt-'));
    cleanups.push(() => rmSync(prefix, { recursive: true, force: true }));
    const ex = scriptedExecutor(() => ({}), { capabilities: { resumable: true }, adopt: () => ({ delayMs: 5, status: { state: 'failed', error: new Error('lost its node') } }) });
    const g = new Graph().step('a', [], { executor: 'cluster', retries: 1 });
    const path = g.get('a').outputPath(prefix);
    // What a runner killed mid-step leaves: its lease, its job record, the job's generation.
    const gen = join(localLayout.checkpointRoot(path), 'gen-4');
    mkdirSync(gen, { recursive: true });
    writeFileSync(join(gen, 'epoch-7'), 'by the adopted job');
    const staged = { ...stagedAt(path, attemptDir(path, 'old', 1), 1), checkpoints: gen };
    mkdirSync(staged.dir, { recursive: true });
    const job: JobRecord = { cairn: 1, executor: 'cluster', job: { jobId: 'job-9', executor: 'scripted', info: {} }, attempt: 1, start: 1, firstStart: 1, attempts: [], host: 'elsewhere', runId: 'old', staged };
    writeFileSync(jobFile(path), JSON.stringify(job));
    const holder = { worker_id: 'elsewhere-1-old', timestamp: Date.now() / 1000 - 3600, host: 'elsewhere', pid: 1, processStartTime: null, runId: 'old', token: 'old.1' };
    writeFileSync(leaseFile(path), JSON.stringify(holder));
    utimesSync(leaseFile(path), holder.timestamp, holder.timestamp);
    const summary = await new StepRunner({ prefix, executors: { cluster: ex }, logger: quiet }).run(g.pick('a'));
    expect(summary.counts).toEqual({ succeeded: 1 });
    expect(ex.adopted).toEqual(['job-9']);
    expect(ex.submitted.map((j) => j.checkpointDir)).toEqual([gen]);
    expect(ex.submitted[0]?.task.checkpointDir).toBe(gen);
  }, 60_000);
});

describe('preemption', () => {
  it('a preemption exit code is retried from preemptionRetries without spending retries, resuming from the checkpoints', async () => {
    const { prefix, work } = scratch();
    const spec = trainStep({ work, epochs: 4, preemptAttempts: 2 }, { preemptionExitCodes: [75], retries: 0 });
    const [r] = await run(spec, { prefix, logger: quiet, preemptionBackoffMs: 10 });
    expect(r?.value).toMatchObject({ resumedFrom: 2 });
    expect(record(r?.path as string).attempts?.map((a) => a.state)).toEqual(['preempted', 'preempted', 'succeeded']);
  }, 60_000);

  it('spent preemptionRetries end in FAILED, each attempt recorded as preempted', async () => {
    const { prefix, work } = scratch();
    const spec = trainStep({ work, epochs: 4, preemptAttempts: 9 }, { preemptionExitCodes: [75], preemptionRetries: 1 });
    const err = (await run(spec, { prefix, logger: quiet, preemptionBackoffMs: 10 }).catch((e: unknown) => e)) as StepRunError;
    expect(hasCode(err.failures[0]?.error, 'CAIRN_PREEMPTED')).toBe(true);
    expect(record(spec.outputPath(prefix)).attempts?.map((a) => a.state)).toEqual(['preempted', 'preempted']);
  }, 60_000);

  it('a SIGTERM from outside the runner (a spot interruption) on the process executor is a preemption, not a failure', async () => {
    const { prefix, work } = scratch();
    const spec = trainStep({ work, epochs: 3, waitAt: 1 }, { executor: 'process', retries: 0 });
    const running = run(spec, { prefix, logger: quiet, preemptionBackoffMs: 10 });
    await until(() => progress(work).some((l) => l.epoch === 1), 30_000, 'checkpoint 1');
    const worker = Number(readFileSync(join(work, 'pid-1'), 'utf8').split(' ')[1]);
    process.kill(worker, 'SIGTERM');
    const [r] = await running;
    expect(r?.value).toMatchObject({ resumedFrom: 1 });
    expect(record(r?.path as string).attempts?.map((a) => a.state)).toEqual(['preempted', 'succeeded']);
  }, 60_000);
});
