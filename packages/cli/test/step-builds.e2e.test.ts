/**
 * A step name after a rebuild, through the BUILT binary: once the store holds two builds of
 * `train` (its learning rate changed), `logs`, `status` and `explain` take the name as the build
 * the pipeline references now (pipeline given) or the newest, and name the other builds on one
 * line; `run` and `plan` print each step's short hash, which picks a build.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cairn, makeProject } from './helpers/cli.js';

let project: ReturnType<typeof makeProject>;
let dir: string;
let prefix: string;
/** Short hashes (8 hex) of train's two builds, as `run` printed them. */
let first: string;
let second: string;

function trainHash(stdout: string): string {
  const m = /done\s+train ([0-9a-f]{8}) /.exec(stdout);
  if (m === null) throw new Error(`no hash for train in:\n${stdout}`);
  return m[1] as string;
}

beforeAll(() => {
  assertBuilt();
  project = makeProject(['pipeline.mjs']);
  dir = project.dir;
  prefix = project.prefix;
  const a = cairn(dir, ['run', 'pipeline.mjs', '--prefix', prefix], { FX_LR: '0.1' });
  expect(a.code, a.stderr).toBe(0);
  first = trainHash(a.stdout);
  const b = cairn(dir, ['run', 'pipeline.mjs', '--prefix', prefix], { FX_LR: '0.2' });
  expect(b.code, b.stderr).toBe(0);
  second = trainHash(b.stdout);
}, 120_000);
afterAll(() => project?.cleanup());

describe('a step name with two builds in the store', () => {
  it('run printed a different short hash for each build, and plan prints the current one', () => {
    expect(first).not.toBe(second);
    const plan = cairn(dir, ['plan', 'pipeline.mjs', '--prefix', prefix], { FX_LR: '0.1' });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(new RegExp(`train\\s+${first}`));
  });

  it('logs: the newest build without a pipeline, with a line naming the other build', () => {
    const r = cairn(dir, ['logs', 'train', '--prefix', prefix]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('lr=0.2');
    expect(r.stderr).not.toContain('CAIRN_AMBIGUOUS_STEP');
    expect(r.stderr).toContain(`showing train-${second} (the newest build)`);
    expect(r.stderr).toContain(`train-${first}`);
    expect(r.stderr).toContain(`cairn logs train-${first}`);
  });

  it('logs with the pipeline: the build the pipeline references now', () => {
    const r = cairn(dir, ['logs', 'train', 'pipeline.mjs', '--prefix', prefix], { FX_LR: '0.1' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('lr=0.1');
    expect(r.stderr).toContain(`showing train-${first} (the build the pipeline references now)`);
  });

  it('the short hash the run printed picks one build', () => {
    const r = cairn(dir, ['logs', `train-${first}`, '--prefix', prefix]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('lr=0.1');
    expect(r.stderr).toBe('');
  });

  it('status and explain take the name too', () => {
    const s = cairn(dir, ['status', 'train', '--prefix', prefix]);
    expect(s.code, s.stderr).toBe(0);
    expect(s.stdout).toContain(`train-${second}`);
    expect(s.stderr).toContain(`cairn status train-${first}`);
    const withPipeline = cairn(dir, ['status', 'train', 'pipeline.mjs', '--prefix', prefix, '--json'], { FX_LR: '0.1' });
    expect(withPipeline.code, withPipeline.stderr).toBe(0);
    expect(JSON.parse(withPipeline.stdout).record.nameWithHash).toContain(`train-${first}`);
    const e = cairn(dir, ['explain', 'train', '--prefix', prefix]);
    expect(e.code, e.stderr).toBe(0);
    expect(e.stdout).toContain(`train-${second}`);
    expect(e.stderr).toContain(`train-${first}`);
  });

  it('a name the store does not hold is still a typed error', () => {
    const r = cairn(dir, ['logs', 'nope', '--prefix', prefix]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('CAIRN_NO_SUCH_STEP');
  });
});
