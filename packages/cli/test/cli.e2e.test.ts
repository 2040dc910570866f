/**
 * End-to-end tests of the BUILT binary (`node dist/bin.js`) on fixture pipelines in temp
 * directories. Build first: `npx tsup` in packages/core, packages/runner and packages/cli.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cairn, cairnAsync, findChromium, makeProject, screenshot, waitFor } from './helpers/cli.js';
import { countColor, countNonBackground, decodePng } from './helpers/png.js';

const COMMANDS = ['run', 'plan', 'status', 'logs', 'explain', 'graph', 'report', 'clean', 'unlock', 'worker', 'config'];
const GREEN = '#3fa34d'; // cached / succeeded
const RED = '#d93f3f'; // failed before / failed

let project: ReturnType<typeof makeProject>;
let dir: string;

/** The output directory name of step `name` (content-addressed: `v1-<hash>`) under `prefix`. */
const built = (prefix: string, name: string, version = 'v1'): string => {
  const found = readdirSync(join(prefix, name)).find((n) => new RegExp(`^${version}-[0-9a-f]{16}$`).test(n));
  if (found === undefined) throw new Error(`no ${name}@${version} under ${prefix}`);
  return found;
};

beforeAll(() => {
  assertBuilt();
  project = makeProject(['pipeline.mjs', 'pipeline-default.ts', 'wide.mjs']);
  dir = project.dir;
});
afterAll(() => project?.cleanup());

describe('usage', () => {
  it('prints help with an example for every command', () => {
    for (const cmd of COMMANDS) {
      const r = cairn(dir, [cmd, '--help']);
      expect(r.code, cmd).toBe(0);
      expect(r.stdout, cmd).toMatch(/Examples?:/);
      expect(r.stdout, cmd).toContain(`cairn ${cmd}`);
    }
  });

  it('exits 2 on bad usage and bad pipelines, with one sentence saying what to do', () => {
    const missing = cairn(dir, ['run', 'nope.mjs', '--prefix', 'x']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/does not exist\. Check the path/);

    writeFileSync(join(dir, 'empty.mjs'), 'export const nothing = 1;\n');
    const noTargets = cairn(dir, ['plan', 'empty.mjs', '--prefix', 'x']);
    expect(noTargets.code).toBe(2);
    expect(noTargets.stderr).toContain('exports no targets');

    writeFileSync(join(dir, 'broken.mjs'), 'export const targets = [;\n');
    const broken = cairn(dir, ['plan', 'broken.mjs', '--prefix', 'x']);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain('Cannot load the pipeline file');
    const verbose = cairn(dir, ['--verbose', 'plan', 'broken.mjs', '--prefix', 'x']);
    expect(verbose.stderr).toContain('caused by:');

    expect(cairn(dir, ['run', 'pipeline.mjs', '--max-concurrent', 'zero', '--prefix', 'x']).code).toBe(2);
    expect(cairn(dir, ['frobnicate']).code).toBe(2);
    const noPrefix = cairn(dir, ['status']);
    expect(noPrefix.code).toBe(2);
    expect(noPrefix.stderr).toContain('No store prefix is set. Pass --prefix');
    const unknownStep = cairn(dir, ['run', 'pipeline.mjs', 'nosuchstep', '--prefix', 'x']);
    expect(unknownStep.code).toBe(2);
    expect(unknownStep.stderr).toContain('Steps: prepare, train, evaluate');
  });

  it('resolves configuration: file < environment < flags', () => {
    writeFileSync(
      join(dir, 'cairn.config.mjs'),
      "export default { prefix: './from-file', maxConcurrent: 3, pools: { gpu: 2 }, executors: { fast: { use: 'threads', options: { maxThreads: 2 } } } };\n",
    );
    try {
      const file = JSON.parse(cairn(dir, ['config', '--json']).stdout);
      expect(file.prefix).toBe(join(dir, 'from-file'));
      expect(file.sources).toMatchObject({ prefix: 'file', maxConcurrent: 'file' });
      expect(file.executors.fast).toEqual({ use: 'threads', options: { maxThreads: 2 } });
      const env = JSON.parse(cairn(dir, ['config', '--json'], { CAIRN_PREFIX: '/tmp/from-env', CAIRN_MAX_CONCURRENT: '5' }).stdout);
      expect(env).toMatchObject({ prefix: '/tmp/from-env', maxConcurrent: 5, sources: { prefix: 'env', maxConcurrent: 'env' } });
      const flag = JSON.parse(cairn(dir, ['config', '--json', '--prefix', '/tmp/from-flag', '--max-concurrent', '7'], { CAIRN_PREFIX: '/tmp/from-env' }).stdout);
      expect(flag).toMatchObject({ prefix: '/tmp/from-flag', maxConcurrent: 7, sources: { prefix: 'flag', maxConcurrent: 'flag' } });
      // A configured executor (a built-in under another name) runs steps.
      const run = cairn(dir, ['run', 'pipeline.mjs', '--executor', 'fast']);
      expect(run.code, run.stderr).toBe(0);
      const status = JSON.parse(cairn(dir, ['status', '--json']).stdout);
      expect(status.prefix).toBe(join(dir, 'from-file'));
      expect(status.steps.map((s: { executor: string }) => s.executor)).toEqual(['fast', 'fast', 'fast']);
      const bad = cairn(dir, ['config'], { CAIRN_MAX_CONCURRENT: 'lots' });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('CAIRN_MAX_CONCURRENT must be a positive integer');
    } finally {
      writeFileSync(join(dir, 'cairn.config.mjs'), 'export default {};\n');
    }
  });
});

describe('graph', () => {
  it('renders dot and mermaid without a store (states unknown)', () => {
    const dot = cairn(dir, ['graph', 'pipeline.mjs', '--no-plan']);
    expect(dot.code).toBe(0);
    expect(dot.stdout).toMatch(/^digraph cairn \{/);
    expect(dot.stdout).toMatch(/"prepare-[0-9a-f]{16}" -> "train-[0-9a-f]{16}";/);
    expect(dot.stdout).toMatch(/"train-[0-9a-f]{16}" -> "evaluate-[0-9a-f]{16}";/);
    const mermaid = cairn(dir, ['graph', 'pipeline.mjs', '--format', 'mermaid', '--no-plan']);
    expect(mermaid.code).toBe(0);
    expect(mermaid.stdout.split('\n')[0]).toBe('flowchart LR');
    expect(mermaid.stdout).toContain('n0 --> n1');
    expect(mermaid.stdout).toContain('n1 --> n2');
    expect(mermaid.stdout).toContain('classDef unknown');
    expect(cairn(dir, ['graph', 'pipeline.mjs', '--format', 'png']).code).toBe(2);
  });

  it('loads a TypeScript pipeline whose targets are the default export', () => {
    const r = cairn(dir, ['graph', 'pipeline-default.ts', '--no-plan']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/"hello-[0-9a-f]{16}"/);
  });
});

describe('a pipeline through its life', () => {
  const prefix = () => join(dir, 'store');

  it('plans everything as "will run" on an empty store (text and JSON)', () => {
    const text = cairn(dir, ['plan', 'pipeline.mjs', '--prefix', prefix()]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^step\s+hash\s+state\s+reason\s+output/);
    expect(text.stdout).toMatch(/prepare\s+[0-9a-f]{8}\s+will run/);
    expect(text.stdout).toContain('3 step(s): 3 will run');
    const json = JSON.parse(cairn(dir, ['plan', 'pipeline.mjs', '--prefix', prefix(), '--json']).stdout);
    expect(json.steps.map((s: { name: string; state: string }) => [s.name, s.state])).toEqual([
      ['prepare', 'run'],
      ['train', 'run'],
      ['evaluate', 'run'],
    ]);
    expect(json.steps[0].outputPath).toMatch(new RegExp(`^${join(prefix(), 'prepare')}/v1-[0-9a-f]{16}$`));
    expect(existsSync(prefix())).toBe(false); // a plan writes nothing
  });

  it('runs (exit 0), then a rerun serves everything from the store', () => {
    const first = cairn(dir, ['run', 'pipeline.mjs', '--prefix', prefix()]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/done\s+prepare/);
    expect(first.stdout).toMatch(/done\s+evaluate/);
    expect(first.stdout).toContain('3 succeeded');
    expect(JSON.parse(readFileSync(join(prefix(), 'train', built(prefix(), 'train'), 'model.json'), 'utf8'))).toEqual({ rows: 3, lr: 0.1 });

    const again = cairn(dir, ['run', 'pipeline.mjs', '--prefix', prefix(), '--json']);
    expect(again.code).toBe(0);
    const events = again.stdout.trim().split('\n').map((l) => JSON.parse(l));
    const steps = events.filter((e) => e.type === 'step');
    expect(steps.every((e) => e.state === 'cached')).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'summary', exitCode: 0, counts: { cached: 1 } });
    const plan = JSON.parse(cairn(dir, ['plan', 'pipeline.mjs', '--prefix', prefix(), '--json']).stdout);
    expect(plan.counts).toEqual({ 'not-examined': 2, cached: 1 });
  });

  it('explains a config change field by field', () => {
    const r = cairn(dir, ['explain', 'train', 'pipeline.mjs', '--prefix', prefix()], { FX_LR: '0.2' });
    expect(r.code, r.stderr).toBe(0);
    // The reason is the plan's (issue 16: explain said "cached" where a run rebuilt the step).
    expect(r.stdout).toContain('will run: changed since the last build: lr: 0.1 -> 0.2 (last build: ');
    expect(r.stdout).toMatch(/fingerprint\s+[0-9a-f]{16}\s+[0-9a-f]{16}/);
    const evaluate = cairn(dir, ['explain', 'evaluate', 'pipeline.mjs', '--prefix', prefix()], { FX_LR: '0.2' });
    expect(evaluate.stdout).toContain('will run: changed since the last build: dependency train@v1 changed');
    const bumped = JSON.parse(cairn(dir, ['explain', 'train', 'pipeline.mjs', '--prefix', prefix(), '--json'], { FX_LR: '0.2', FX_VERSION: 'v2' }).stdout);
    expect(bumped.state).toBe('run');
    expect(bumped.reasons).toEqual(['will run: not built']);
    expect(bumped.fields.find((f: { field: string }) => f.field === 'version')).toMatchObject({ recorded: 'v1', current: 'v2', same: false });
    expect(bumped.configDiff).toEqual(['lr: 0.1 -> 0.2']);
    expect(bumped.deps).toEqual([{ ident: 'prepare@v1', current: true, recorded: true, status: 'SUCCESS' }]);
    const cached = cairn(dir, ['explain', 'prepare', 'pipeline.mjs', '--prefix', prefix()]);
    expect(cached.stdout).toContain('cached: the stored output is current');
  });

  it('explain --config prints the exact config the step will receive, running and reading nothing', () => {
    const status = JSON.parse(cairn(dir, ['status', '--prefix', prefix(), '--json']).stdout);
    const prepared = join(prefix(), status.steps.find((s: { name: string }) => s.name === 'prepare').step as string);
    const r = cairn(dir, ['explain', 'train', 'pipeline.mjs', '--prefix', prefix(), '--config', '--json'], { FX_LR: '0.3' });
    expect(r.code, r.stderr).toBe(0);
    const m = JSON.parse(r.stdout);
    expect(m.config).toEqual({ data: prepared, lr: 0.3, out: m.outputPath });
    expect(m.outputPath).toMatch(/\/train\/v1-[0-9a-f]{16}$/);
    const text = cairn(dir, ['explain', 'train', 'pipeline.mjs', '--prefix', prefix(), '--config']);
    expect(text.stdout).toContain('"lr": 0.1');
    // Nothing is read or created: a prefix that does not exist stays absent.
    const absent = join(dir, 'no-store-here');
    expect(cairn(dir, ['explain', 'train', 'pipeline.mjs', '--prefix', absent, '--config']).code).toBe(0);
    expect(existsSync(absent)).toBe(false);
    const usage = cairn(dir, ['explain', 'train', '--prefix', prefix(), '--config']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--config needs the pipeline');
    // Elsewhere --config names the config file, and needs one.
    const bare = cairn(dir, ['status', '--prefix', prefix(), '--config']);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('--config needs a file');
  });

  it('shows logs by name and by nameWithHash prefix', () => {
    const byName = cairn(dir, ['logs', 'train', '--prefix', prefix()]);
    expect(byName.code, byName.stderr).toBe(0);
    expect(byName.stdout).toContain('training with lr=0.1');
    const status = JSON.parse(cairn(dir, ['status', '--prefix', prefix(), '--json']).stdout);
    const nwh: string = status.steps.find((s: { name: string }) => s.name === 'prepare').nameWithHash;
    const byHash = cairn(dir, ['logs', nwh.slice(0, 'prepare-'.length + 6), '--prefix', prefix()]);
    expect(byHash.stdout).toContain('prepared 3 rows');
    expect(cairn(dir, ['logs', 'nosuch', '--prefix', prefix()]).code).toBe(2);
  });
});

describe('failures', () => {
  const prefix = () => join(dir, 'failing');

  it('exits 1 when a step fails; status, plan, clean and a forced rerun follow', () => {
    const run = cairn(dir, ['run', 'pipeline.mjs', '--prefix', prefix()], { FX_FAIL: '1' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('1 step(s) failed');
    expect(run.stderr).toContain('train: training diverged: loss is NaN');
    expect(run.stderr).toContain('cairn logs');

    const status = cairn(dir, ['status', '--prefix', prefix()]);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/train\/v1-[0-9a-f]{16}\s+FAILED\s+\d{4}-\d\d-\d\d [\d:]+\s+\S+\s+1\s+inline\s+train-[0-9a-f]{16}\.1/);
    expect(status.stdout).toMatch(/evaluate\/v1-[0-9a-f]{16}\s+DEP_FAILED/);
    expect(status.stdout).toMatch(/prepare\/v1-[0-9a-f]{16}\s+SUCCESS/);
    expect(status.stdout).toMatch(/✗ train\/v1-[0-9a-f]{16}: training diverged: loss is NaN/);
    expect(cairn(dir, ['logs', 'train', '--prefix', prefix()]).stdout).toContain('ERROR loss is NaN');

    // The default reruns a failed step (as the library and Marin do); --no-force-run-failed reports it instead.
    const refused = cairn(dir, ['run', 'pipeline.mjs', '--prefix', prefix(), '--no-force-run-failed']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('--force-run-failed');
    const again = cairn(dir, ['run', 'pipeline.mjs', '--prefix', prefix()], { FX_FAIL: '1' });
    expect(again.code).toBe(1);
    expect(again.stdout).toMatch(/running\s+train/);
    const plan = JSON.parse(cairn(dir, ['plan', 'pipeline.mjs', '--prefix', prefix(), '--json']).stdout);
    expect(plan.steps.find((s: { name: string }) => s.name === 'train').state).toBe('failed-before');

    const [train, evaluate, prepare] = ['train', 'evaluate', 'prepare'].map((n) => `${n}/${built(prefix(), n)}`);
    const dry = cairn(dir, ['clean', '--prefix', prefix()]);
    expect(dry.stdout).toContain(`would remove ${evaluate} (dep-failed)`);
    expect(dry.stdout).toContain(`would remove ${train} (failed)`);
    expect(dry.stdout).not.toContain('prepare');
    expect(existsSync(join(prefix(), train as string))).toBe(true);
    const yes = JSON.parse(cairn(dir, ['clean', '--prefix', prefix(), '--yes', '--json']).stdout);
    expect(yes.removed).toBe(true);
    expect(yes.outputs.map((o: { step: string }) => o.step).sort()).toEqual([evaluate, train]);
    expect(existsSync(join(prefix(), train as string))).toBe(false);
    expect(existsSync(join(prefix(), prepare as string))).toBe(true);

    const fixed = cairn(dir, ['run', 'pipeline.mjs', '--prefix', prefix()]);
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(fixed.stdout).toMatch(/cached\s+prepare/);
  });

  it('clean lists outputs the pipeline no longer references', () => {
    // Version v2 of train makes train v1's output unreferenced, and evaluate's: its identity (its path) changed with train's.
    const r = cairn(dir, ['clean', 'pipeline.mjs', '--prefix', prefix()], { FX_VERSION: 'v2' });
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual([`would remove evaluate/${built(prefix(), 'evaluate')} (unreferenced)`, `would remove train/${built(prefix(), 'train')} (unreferenced)`, '2 output(s); rerun with --yes to remove them.']);
  });

  it('clean removes attempt directories a dead runner left beside outputs, never a live one', () => {
    const p = join(dir, 'leftovers');
    expect(cairn(dir, ['run', 'pipeline.mjs', '--prefix', p]).code).toBe(0);
    // A runner killed mid-attempt leaves its attempt's directory beside the output path.
    const out = built(p, 'train');
    const dead = join(p, 'train', `.${out}.cairn-attempt-deadrun-1`);
    mkdirSync(join(dead, '.cairn', 'logs'), { recursive: true });
    writeFileSync(join(dead, 'partial'), 'x');
    const dry = cairn(dir, ['clean', '--prefix', p]);
    expect(dry.stdout).toContain(`would remove train/.${out}.cairn-attempt-deadrun-1 (abandoned attempt)`);
    // While a live runner holds the step's lease, its attempt directory is not touched.
    const lease = join(p, 'train', `.${out}.cairn-lease`);
    writeFileSync(lease, JSON.stringify({ worker_id: 'live', timestamp: Date.now() / 1000, host: hostname(), pid: process.pid, processStartTime: null, runId: 'live', token: 'live.1' }));
    expect(cairn(dir, ['clean', '--prefix', p]).stdout).not.toContain('cairn-attempt');
    rmSync(lease);
    expect(cairn(dir, ['clean', '--prefix', p, '--yes']).code).toBe(0);
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(join(p, 'train', out))).toBe(true);
  });

  it('--force-run-failed reruns a step that failed before', () => {
    expect(cairn(dir, ['run', 'pipeline.mjs', '--prefix', join(dir, 'forced')], { FX_FAIL: '1' }).code).toBe(1);
    const forced = cairn(dir, ['run', 'pipeline.mjs', '--prefix', join(dir, 'forced'), '--force-run-failed']);
    expect(forced.code, forced.stderr).toBe(0);
  });
});

describe('worker', () => {
  it('runs one task through the runner worker entry (what remote executors start)', () => {
    writeFileSync(
      join(dir, 'make-task.mjs'),
      [
        "import { encodeTask, makeTask, lower } from '@cairn/core';",
        "import { writeFileSync } from 'node:fs';",
        "const { targets } = await import('./pipeline.mjs');",
        'const prepare = lower(targets)[0].deps[0].deps[0];',
        "writeFileSync(process.argv[2], encodeTask(makeTask(prepare, { outputPath: process.argv[3], depPaths: {}, attempt: 1 })));",
      ].join('\n'),
    );
    const task = join(dir, 'task.msgpack');
    const outDir = join(dir, 'worker-out');
    expect(spawnSync(process.execPath, ['make-task.mjs', task, outDir], { cwd: dir }).status).toBe(0);
    const r = cairn(dir, ['worker', '--task', task, '--result', join(dir, 'result.msgpack')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('[prepare] INFO prepared 3 rows');
    expect(readFileSync(join(outDir, 'data.txt'), 'utf8')).toBe('0\n1\n2');
    expect(existsSync(join(dir, 'result.msgpack'))).toBe(true);
    expect(cairn(dir, ['worker', '--task', join(dir, 'missing.msgpack'), '--result', join(dir, 'r2.msgpack')]).code).toBe(2);
  });
});

describe('interrupts and leases', () => {
  it('Ctrl-C cancels the running step (exit 130); a rerun resumes', async () => {
    const prefix = join(dir, 'interrupted');
    const run = cairnAsync(dir, ['run', 'pipeline.mjs', '--prefix', prefix], { FX_SLOW_MS: '30000' });
    await waitFor(run.output, (s) => /running\s+train/.test(s), 20_000);
    const follow = cairnAsync(dir, ['logs', 'train', '-f', '--prefix', prefix]);
    await waitFor(follow.output, (s) => s.includes('training with lr=0.1'), 20_000);
    run.child.kill('SIGINT');
    const r = await run.done;
    expect(r.code).toBe(130);
    // The step released its lease, so following ends by itself.
    expect((await follow.done).code).toBe(0);
    expect(r.stdout).toContain('Interrupted: cancelling running steps');
    const status = JSON.parse(cairn(dir, ['status', '--prefix', prefix, '--json']).stdout);
    expect(status.steps.find((s: { name: string }) => s.name === 'train')).toMatchObject({ status: 'CANCELLED', leaseHolder: null });

    const resumed = cairn(dir, ['run', 'pipeline.mjs', '--prefix', prefix]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/cached\s+prepare/);
    expect(resumed.stdout).toMatch(/done\s+train/);
  });

  it('status shows the lease holder of a running step; unlock --stale clears only dead holders', async () => {
    const prefix = join(dir, 'leases');
    const run = cairnAsync(dir, ['run', 'pipeline.mjs', '--prefix', prefix], { FX_SLOW_MS: '30000' });
    try {
      await waitFor(run.output, (s) => /running\s+train/.test(s), 20_000);
      const status = JSON.parse(cairn(dir, ['status', '--prefix', prefix, '--json']).stdout);
      // Running: no record yet, so no name; its directory says which step it is.
      const train = status.steps.find((s: { step: string }) => s.step.startsWith('train/'));
      expect(train.step).toMatch(/^train\/v1-[0-9a-f]{16}$/);
      expect(train.status).toBe('RUNNING');
      expect(train.leaseHolder).toContain(`:${run.child.pid} (run `);
      const live = cairn(dir, ['unlock', '--stale', '--prefix', prefix]);
      expect(live.stdout).toContain(`live  ${train.step}`);
      expect(existsSync(join(prefix, 'train', `.${train.step.slice('train/'.length)}.cairn-lease`))).toBe(true);
    } finally {
      run.child.kill('SIGKILL');
      await run.done;
    }
    // The holder is dead now: its lease is stale.
    const list = cairn(dir, ['unlock', '--prefix', prefix]);
    expect(list.stdout).toMatch(/stale train\/v1-[0-9a-f]{16}/);
    expect(list.stdout).toContain('rerun with --stale');
    const cleared = cairn(dir, ['unlock', '--stale', '--prefix', prefix]);
    expect(cleared.stdout).toMatch(/cleared train\/v1-[0-9a-f]{16}/);
    expect(readdirSync(join(prefix, 'train')).filter((n) => n.endsWith('.cairn-lease'))).toEqual([]);
  });
});

describe('HTML pages in headless Chromium', () => {
  const chromium = findChromium();
  const skip = chromium === undefined && !process.env.CI;
  if (skip) console.warn('SKIPPED: the HTML graph and report screenshots need Chromium (apt-get install -y --no-install-recommends chromium).');

  it.skipIf(skip)('draws the graph with plan states as colours', () => {
    const prefix = join(dir, 'html');
    expect(cairn(dir, ['run', 'pipeline.mjs', '--prefix', prefix], { FX_FAIL: '1' }).code).toBe(1);
    const out = join(dir, 'graph.html');
    const r = cairn(dir, ['graph', 'pipeline.mjs', '--format', 'html', '--out', out, '--prefix', prefix]);
    expect(r.code, r.stderr).toBe(0);
    const html = readFileSync(out, 'utf8');
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=|https?:\/\/(?!www\.w3\.org)/); // self-contained
    const png = decodePng(readFileSync(screenshot(chromium as string, out, dir)));
    expect(png.width).toBe(1200);
    expect(countNonBackground(png, [255, 255, 255])).toBeGreaterThan(20_000);
    expect(countColor(png, GREEN)).toBeGreaterThan(1000); // prepare: cached
    expect(countColor(png, RED)).toBeGreaterThan(1000); // train, evaluate: failed before
  });

  it.skipIf(skip)('handles thousands of nodes', () => {
    const out = join(dir, 'wide.html');
    const r = cairn(dir, ['graph', 'wide.mjs', '--format', 'html', '--out', out, '--no-plan'], { FX_WIDE_N: '2000' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('2551 steps');
    const png = decodePng(readFileSync(screenshot(chromium as string, out, dir)));
    expect(countNonBackground(png, [255, 255, 255])).toBeGreaterThan(100_000);
  });

  it.skipIf(skip)('renders the report of the last run: timeline, failures with log tails', () => {
    const prefix = join(dir, 'html');
    const out = join(dir, 'report.html');
    const r = cairn(dir, ['report', '--prefix', prefix, '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('1 failed (from journal)');
    const html = readFileSync(out, 'utf8');
    expect(html).toContain('Failures (1)');
    expect(html).toContain('ERROR loss is NaN');
    const png = decodePng(readFileSync(screenshot(chromium as string, out, dir)));
    expect(countNonBackground(png, [255, 255, 255])).toBeGreaterThan(20_000);
    expect(countColor(png, GREEN)).toBeGreaterThan(300); // prepare's bar
    expect(countColor(png, RED)).toBeGreaterThan(100); // train's bar
  });
});
