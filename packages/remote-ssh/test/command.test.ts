/**
 * Command steps on the SSH executor, on a real sshd, as a user whose PATH has no `node` (and a
 * `nodePath` that does not exist): the far side runs the program with a POSIX shell only.
 * Sources are staged by content hash, a dependency's output is uploaded, the result comes back
 * through `$CAIRN_RESULT`, failures name the exit code and the stderr tail, a cancel kills the
 * program and its grandchildren, and examples/ml runs end to end.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { command, lower, OUT, type ArtifactStep, type Resources } from '@cairn/core';
import { StepRunner } from '@cairn/runner';
import type { Executor } from '@cairn/runner/executor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSshExecutor } from '../src/index.js';
import { alive, hostOf, jobForSpec, Recorder, removeScratch, scratch, sshdOrSkip, startSshd, until, type SshdInstance } from './helpers.js';
import { ensureNoNodeUser, installPythonHelper, NO_NODE_USER } from './no-node-host.js';

const run = sshdOrSkip() && process.getuid?.() === 0;
const quiet = { info() {}, warn() {}, error() {} };

describe.runIf(run)('command steps on the SSH executor (no node on the host)', () => {
  let s: SshdInstance;
  const open: Executor[] = [];
  beforeAll(async () => {
    ensureNoNodeUser();
    s = await startSshd({ user: NO_NODE_USER });
    installPythonHelper(s.account);
  });
  afterAll(async () => {
    await Promise.all(open.map((e) => e.stop()));
    await s?.stop();
    removeScratch();
  });

  const ssh = (extra: Record<string, unknown> = {}) => {
    const host = hostOf(s, 'h', { nodePath: '/nonexistent/node', capacity: { cpus: 4, memoryGb: 16, gpus: [0, 1, 2] } });
    const e = createSshExecutor({ hosts: [host], pollIntervalMs: 50, cancelGraceMs: 1000, ...extra });
    open.push(e);
    return e;
  };
  /** Submits one command step straight to a started executor; resolves with its terminal status and log paths. */
  const submit = async (e: Executor, step: ArtifactStep<unknown>, opts: { depPaths?: Record<string, string>; signal?: AbortSignal; resources?: Resources } = {}) => {
    const prefix = scratch();
    const rec = new Recorder(prefix);
    await e.start(rec);
    const job = jobForSpec(prefix, lower(step), opts);
    const handle = await e.submit(job);
    return { rec, job, handle, done: () => rec.done(job.jobKey, 60_000) };
  };

  it('runs a program in a session whose PATH has no node; its stdout reaches the attempt log', async () => {
    const probe = command({ name: 'probe', version: 'v1', executor: 'ssh', program: 'sh', args: ['-c', 'if command -v node; then exit 3; fi; echo "no node on $PATH"; printf \'{"result": {"ok": true}}\' > "$CAIRN_RESULT"'] });
    const { job, done } = await submit(ssh(), probe);
    const end = await done();
    expect(end.error).toBeUndefined();
    expect(end).toMatchObject({ state: 'succeeded', result: { ok: true } });
    expect(readFileSync(job.logPaths.stdout, 'utf8')).toBe('no node on /usr/local/lib/cairn-test-no-node/bin\n');
  }, 60_000);

  it('a short step whose output is too large to come with its launch is collected whole all the same', async () => {
    // 150 KB of stdout: over what the launch prints inline, so the status check and reads collect it.
    const big = command({ name: 'big', version: 'v1', executor: 'ssh', program: 'sh', args: ['-c', 'head -c 150000 /dev/zero | tr "\\0" x; echo; echo err >&2; printf \'{"result": 7}\' > "$CAIRN_RESULT"'] });
    const { job, done } = await submit(ssh({ pollIntervalMs: 100 }), big);
    expect(await done()).toMatchObject({ state: 'succeeded', result: 7 });
    expect(readFileSync(job.logPaths.stdout, 'utf8')).toBe(`${'x'.repeat(150_000)}\n`);
    expect(readFileSync(job.logPaths.stderr, 'utf8')).toBe('err\n');
  }, 60_000);

  it('passes arguments and environment values through the shell unchanged; CUDA_VISIBLE_DEVICES names the GPUs it was given', async () => {
    const odd = `it's $HOME "quoted" \\ \`date\` ; rm -rf /tmp/x\nsecond line`;
    const script = 'printf "%s" "$1" > "$CAIRN_OUTPUT/arg"; printf "%s" "$ODD" > "$CAIRN_OUTPUT/env"; printf "%s|%s" "$CUDA_VISIBLE_DEVICES" "$CAIRN_ATTEMPT" > "$CAIRN_OUTPUT/cuda"';
    const step = command({ name: 'quoting', version: 'v1', executor: 'ssh', program: 'sh', args: ['-c', script, 'quoting', odd], env: { ODD: odd }, resources: { gpus: 2 } });
    const { job, done } = await submit(ssh(), step, { resources: { gpus: 2 } });
    expect(await done()).toMatchObject({ state: 'succeeded' });
    expect(readFileSync(join(job.outputPath, 'arg'), 'utf8')).toBe(odd);
    expect(readFileSync(join(job.outputPath, 'env'), 'utf8')).toBe(odd);
    expect(readFileSync(join(job.outputPath, 'cuda'), 'utf8')).toBe('0,1|1');
  }, 60_000);

  it('runs a Python program with a declared source on a dependency uploaded to the host, reporting its result through cairn_step', async () => {
    const dir = scratch('cairn-ssh-cmd-project-');
    writeFileSync(
      join(dir, 'count.py'),
      [
        'import json, os, sys',
        'from cairn_step import context, report',
        'ctx = context()',
        'words = open(os.path.join(ctx.inputs["words"], "words.txt")).read().split()',
        'with open(os.path.join(ctx.output_path, "count.json"), "w") as f: json.dump({"n": len(words)}, f)',
        'print("counted", len(words), "in", os.getcwd(), file=sys.stderr)',
        'report({"words": len(words), "attempt": ctx.attempt, "cwdHasSource": os.path.exists("lib/count.py")}, metadata={"host": "far"})',
      ].join('\n'),
    );
    mkdirSync(join(dir, 'lib'));
    writeFileSync(join(dir, 'lib', 'count.py'), '# a source in a subdirectory\n');
    const gen = command({ name: 'gen', version: 'v1', program: 'sh', args: ['-c', 'printf "a b c\\nd e\\n" > "$1/words.txt"', 'gen', OUT] });
    const count = command({ name: 'count', version: 'v1', program: 'python3', dir, sources: ['count.py', 'lib/count.py'], args: ['count.py'], inputs: { words: gen } });
    const prefix = scratch();
    const runner = new StepRunner({ prefix, executors: [ssh()], defaultExecutor: 'ssh', logger: quiet });
    const [loaded] = await runner.load([count], { handleSigint: false });
    expect(loaded.value).toEqual({ words: 5, attempt: 1, cwdHasSource: true });
    // The output written on the host was staged back to the store.
    expect(JSON.parse(readFileSync(join(loaded.path, 'count.json'), 'utf8'))).toEqual({ n: 5 });
  }, 90_000);

  it('a failing program fails with its exit code and the last lines of its stderr; a missing one is named', async () => {
    const e = ssh();
    const script = 'for i in $(seq 1 30); do echo "line $i" >&2; done; exit 3';
    const failing = command({ name: 'failing', version: 'v1', executor: 'ssh', program: 'sh', args: ['-c', script] });
    const end = await (await submit(e, failing)).done();
    expect(end).toMatchObject({ state: 'failed', exitCode: 3 });
    const err = end.error as Error & { code: string };
    expect(err.code).toBe('CAIRN_COMMAND_FAILED');
    expect(err.message).toContain('sh exited with code 3 on SSH host "h"');
    expect(err.message).toContain('line 30');
    expect(err.message).toContain('line 11\n');
    expect(err.message).not.toContain('line 10\n');

    const killed = command({ name: 'killed', version: 'v1', executor: 'ssh', program: 'sh', args: ['-c', 'echo bye >&2; kill -s KILL $$'] });
    const k = await (await submit(e, killed)).done();
    expect((k.error as Error).message).toContain('was killed by SIGKILL');

    const missing = command({ name: 'missing', version: 'v1', executor: 'ssh', program: 'no-such-program-xyz', args: [] });
    const m = await (await submit(e, missing)).done();
    expect(m.state).toBe('failed');
    expect((m.error as { code: string }).code).toBe('CAIRN_COMMAND_NOT_FOUND');
    expect((m.error as Error).message).toContain('"no-such-program-xyz": not found on PATH (/usr/local/lib/cairn-test-no-node/bin)');
  }, 90_000);

  it("runs the program in the step's venv (a real one, made by the test): its python3 imports what only the venv holds, through a wrap prefix; a missing venv is named", async () => {
    const dir = scratch('cairn-ssh-cmd-venv-');
    const venv = join(dir, 'venv');
    // The system's python3, which the host's user can run (root's own may live under /root, e.g. pyenv's).
    execFileSync('/usr/bin/python3', ['-m', 'venv', '--without-pip', venv]);
    const lib = join(venv, 'lib');
    writeFileSync(join(lib, readdirSync(lib).find((d) => d.startsWith('python')) as string, 'site-packages', 'only_in_venv.py'), 'WHERE = "venv"\n');
    execFileSync('chmod', ['-R', 'a+rX', dir]);
    writeFileSync(join(dir, 'probe.py'), 'import json, os, sys, only_in_venv\njson.dump({"result": {"where": only_in_venv.WHERE, "prefix": sys.prefix, "venv": os.environ.get("VIRTUAL_ENV"), "wrapped": os.environ.get("WRAPPED")}}, open(os.environ["CAIRN_RESULT"], "w"))\n');
    writeFileSync(join(dir, 'wrap.sh'), '#!/bin/sh\nWRAPPED="$1"; export WRAPPED; shift\nexec "$@"\n', { mode: 0o755 });
    const e = ssh();
    const step = command({ name: 'in-venv', version: 'v1', executor: 'ssh', program: 'python3', args: ['probe.py'], dir, sources: ['probe.py', 'wrap.sh'], environment: { venv, wrap: ['./wrap.sh', 'by-wrap'] } });
    const end = await (await submit(e, step)).done();
    expect(end.error).toBeUndefined();
    expect(end).toMatchObject({ state: 'succeeded', result: { where: 'venv', prefix: venv, venv, wrapped: 'by-wrap' } });

    const missing = command({ name: 'no-venv', version: 'v1', executor: 'ssh', program: 'python3', args: ['-c', 'pass'], environment: { venv: join(dir, 'no-such-venv') } });
    const m = await (await submit(e, missing)).done();
    expect(m.state).toBe('failed');
    expect((m.error as { code: string }).code).toBe('CAIRN_COMMAND_NOT_FOUND');
    expect((m.error as Error).message).toContain(`its venv ${join(dir, 'no-such-venv')} has no bin/ directory here; create it`);
  }, 90_000);

  it('a preemption exit code, or a SIGTERM Cairn did not send (a spot host shutting down), is a preemption, not a failure', async () => {
    const e = ssh();
    const coded = command({ name: 'coded', version: 'v1', executor: 'ssh', program: 'sh', args: ['-c', 'echo reclaimed >&2; exit 75'], preemptionExitCodes: [75] });
    const c = await (await submit(e, coded)).done();
    expect(c).toMatchObject({ state: 'failed', exitCode: 75, preempted: true });
    expect((c.error as { code: string }).code).toBe('CAIRN_PREEMPTED');
    expect((c.error as Error).message).toContain('reclaimed');
    const termed = command({ name: 'termed', version: 'v1', executor: 'ssh', program: 'sh', args: ['-c', 'kill -s TERM $$'] });
    const t = await (await submit(e, termed)).done();
    expect(t).toMatchObject({ state: 'failed', exitCode: 143, preempted: true });
    expect((t.error as Error).message).toContain('received a SIGTERM Cairn did not send');
    // Any other exit code is the step failing.
    const other = command({ name: 'other', version: 'v1', executor: 'ssh', program: 'sh', args: ['-c', 'exit 3'], preemptionExitCodes: [75] });
    const o = await (await submit(e, other)).done();
    expect(o.preempted).toBeUndefined();
    expect((o.error as { code: string }).code).toBe('CAIRN_COMMAND_FAILED');
  }, 90_000);

  it('cancel kills the program and its grandchildren (one of them deaf to SIGTERM)', async () => {
    const pids = scratch();
    const script = [
      'sleep 300 & echo $! > "$1/sleeper"',
      '( trap "" TERM; while :; do sleep 1; done ) & echo $! > "$1/deaf"',
      'echo $$ > "$1/main"',
      'wait',
    ].join('\n');
    const long = command({ name: 'long', version: 'v1', executor: 'ssh', program: 'sh', args: ['-c', script, 'long', pids] });
    const e = ssh();
    const { handle, done } = await submit(e, long);
    // Written, not only created: a pid file read between the two is empty (a pid 0 that is never alive).
    await until('the program and its grandchildren to start', () => ['sleeper', 'deaf', 'main'].every((f) => existsSync(join(pids, f)) && /^\d+\n$/.test(readFileSync(join(pids, f), 'utf8'))), 30_000);
    const started = ['sleeper', 'deaf', 'main'].map((f) => Number(readFileSync(join(pids, f), 'utf8')));
    expect(started.every((p) => alive(p))).toBe(true);
    await e.cancel([handle]);
    await until('every process of the step to be gone', () => started.every((p) => !alive(p)), 20_000).catch((err) => {
      throw new Error(`${(err as Error).message}: ${started.filter((p) => alive(p)).map((p) => `${p} ${readFileSync(`/proc/${p}/cmdline`, 'utf8')}`).join('; ')}`);
    });
    expect((await done()).state).toBe('cancelled');
  }, 90_000);

  it('an edited source is staged again under its new hash; one edited after declaring is refused', async () => {
    const dir = scratch('cairn-ssh-cmd-edit-');
    const file = join(dir, 'v.sh');
    const stepOf = () => command({ name: 'versioned', version: 'v1', executor: 'ssh', program: 'sh', dir, sources: ['v.sh'], args: ['v.sh'] });
    const e = ssh();
    writeFileSync(file, 'printf \'{"result": "one"}\' > "$CAIRN_RESULT"\n');
    const first = stepOf();
    expect(await (await submit(e, first)).done()).toMatchObject({ state: 'succeeded', result: 'one' });
    writeFileSync(file, 'printf \'{"result": "two"}\' > "$CAIRN_RESULT"\n');
    const second = stepOf();
    expect(lower(second).nameWithHash).not.toBe(lower(first).nameWithHash);
    expect(await (await submit(e, second)).done()).toMatchObject({ state: 'succeeded', result: 'two' });
    const staged = (step: ArtifactStep<unknown>) => {
      const hash = (lower(step).inputs as { sources: Record<string, string> }).sources['v.sh'] as string;
      return readFileSync(join(s.workDir, 'h', 'sources', hash, 'v.sh'), 'utf8');
    };
    expect(staged(first)).toContain('one');
    expect(staged(second)).toContain('two');
    // Edited after the step was declared: its identity no longer covers what would run.
    writeFileSync(file, 'printf \'{"result": "three"}\' > "$CAIRN_RESULT"\n');
    const stale = await (await submit(e, second)).done();
    expect(stale.state).not.toBe('succeeded');
    expect(JSON.stringify(stale)).toContain('changed after the pipeline was declared');
  }, 90_000);

  it('examples/ml runs end to end on the SSH executor', async () => {
    const { evaluation, model } = await import('../../../examples/ml/pipeline.js');
    const prefix = scratch();
    const runner = () => new StepRunner({ prefix, executors: [ssh()], defaultExecutor: 'ssh', logger: quiet });
    const [result] = await runner().load([evaluation], { handleSigint: false });
    const value = result.value as { perplexity: number; pairs: number };
    expect(value.pairs).toBeGreaterThan(0);
    expect(value.perplexity).toBeGreaterThan(1);
    expect(value.perplexity).toBeLessThan(24);
    const [trained] = await runner().load([model], { handleSigint: false });
    expect(trained.value).toEqual({ epochs: 3, resumedFrom: 0 });
    const again = await runner().run([evaluation], { handleSigint: false });
    expect(Object.keys(again.counts)).toEqual(['cached']);
  }, 120_000);
});

