/**
 * Caching you can trust (issue 16), on a real directory: content-addressed `apply` steps rebuild
 * exactly what a change reaches; runtime arguments rebuild nothing; fixed paths (a pin, the
 * 'versioned' layout) find drift from one record read and refuse to serve it unless accepted.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type ArtifactStep, apply, hasCode, lower, OUT } from '@cairn/core';
import { StepRunError, StepRunner, type StepRunnerOptions } from '../src/index.js';
import { memoryLogger, tempDirs } from './helpers/graph.js';

const dir = tempDirs();

/** raw → model → eval, like the README's example; every call is counted. */
function pipeline(opts: { smoothing?: number; modelVersion?: string; workers?: number; layout?: 'versioned' } = {}) {
  const calls: string[] = [];
  const seen: unknown[] = [];
  const layout = opts.layout === undefined ? {} : { layout: opts.layout };
  const raw = apply({ name: 'raw', version: 'v1', ...layout, inputs: { out: OUT, rows: 3 }, fn: ({ out, rows }: { out: string; rows: number }) => {
    calls.push('raw');
    writeFileSync(join(out, 'rows'), String(rows));
    return { rows };
  } });
  const model = apply({
    name: 'model',
    version: opts.modelVersion ?? 'v1',
    ...layout,
    inputs: { raw, out: OUT, smoothing: opts.smoothing ?? 0.5 },
    runtime: { workers: opts.workers ?? 2 },
    fn: ({ raw, out, smoothing, workers }: { raw: string; out: string; smoothing: number; workers: number }) => {
      calls.push('model');
      seen.push(workers);
      writeFileSync(join(out, 'model'), `${readFileSync(join(raw, 'rows'), 'utf8')}*${smoothing}`);
      return { smoothing };
    },
  });
  const evaluate = apply({ name: 'eval', version: 'v1', ...layout, inputs: { model }, fn: ({ model }: { model: string }) => {
    calls.push('eval');
    return { score: readFileSync(join(model, 'model'), 'utf8') };
  } });
  return { raw, model, evaluate, calls, seen };
}

const runner = (prefix: string, extra: StepRunnerOptions = {}) => {
  const logger = memoryLogger();
  return { r: new StepRunner({ prefix, logger, ...extra }), logger };
};
const states = async (r: StepRunner, steps: ArtifactStep<unknown>[], options = {}) =>
  Object.fromEntries((await r.plan(steps, options)).steps.map((s) => [s.name, s.state]));
const reasons = async (r: StepRunner, steps: ArtifactStep<unknown>[]) => Object.fromEntries((await r.plan(steps)).steps.map((s) => [s.name, s.reason]));

describe('content-addressed apply steps (the default layout)', () => {
  it('a config change upstream of a built target: plan says what and why, run rebuilds exactly those, a second run nothing', async () => {
    const prefix = dir();
    const { r, logger } = runner(prefix);
    const before = pipeline();
    await r.run([before.evaluate]);
    expect(before.calls).toEqual(['raw', 'model', 'eval']);
    const oldModel = lower(before.model).outputPath(prefix);

    const after = pipeline({ smoothing: 5 });
    expect(await states(r, [after.evaluate])).toEqual({ raw: 'cached', model: 'run', eval: 'run' });
    const why = await reasons(r, [after.evaluate]);
    expect(why.model).toBe(`changed since the last build: smoothing: 0.5 -> 5 (last build: ${oldModel})`);
    expect(why.eval).toMatch(/^changed since the last build: dependency model@v1 changed \(last build: .*\/eval\/v1-[0-9a-f]{16}\)$/);
    const summary = await r.run([after.evaluate]);
    expect(after.calls).toEqual(['model', 'eval']);
    expect(summary.counts).toEqual({ succeeded: 2, cached: 1 });
    expect(readFileSync(join(lower(after.model).outputPath(prefix), 'model'), 'utf8')).toBe('3*5');
    expect(readFileSync(join(oldModel, 'model'), 'utf8')).toBe('3*0.5'); // the old output stays until cairn clean

    const again = pipeline({ smoothing: 5 });
    expect((await r.run([again.evaluate])).counts).toEqual({ cached: 1 });
    expect(again.calls).toEqual([]);
    // Going back is free: the first build is still there.
    const back = pipeline();
    expect((await r.run([back.evaluate])).counts).toEqual({ cached: 1 });
    expect(logger.lines).toEqual([]);
  });

  it('a version bump rebuilds that step and its dependents; a rerun of a fully built pipeline reports every requested step cached', async () => {
    const prefix = dir();
    const { r } = runner(prefix);
    await r.run([pipeline().evaluate]);
    const bumped = pipeline({ modelVersion: 'v2' });
    const summary = await r.run([bumped.evaluate, bumped.model, bumped.raw]);
    expect(bumped.calls).toEqual(['model', 'eval']);
    expect(summary.counts).toEqual({ succeeded: 2, cached: 1 });
    const rerun = pipeline({ modelVersion: 'v2' });
    expect((await r.run([rerun.evaluate, rerun.model, rerun.raw])).counts).toEqual({ cached: 3 });
  });

  it('a runtime argument change rebuilds nothing; a rebuilt step sees the new value, recorded beside its config', async () => {
    const prefix = dir();
    const { r } = runner(prefix);
    await r.run([pipeline({ workers: 2 }).evaluate]);
    const more = pipeline({ workers: 16 });
    expect(await states(r, [more.evaluate])).toEqual({ raw: 'not-examined', model: 'not-examined', eval: 'cached' });
    expect((await r.run([more.evaluate, more.model])).counts).toEqual({ cached: 2 });
    expect(more.calls).toEqual([]);
    await r.run([more.model], { rebuild: ['model'] });
    expect(more.seen).toEqual([16]);
    const record = JSON.parse(readFileSync(join(lower(more.model).outputPath(prefix), '.artifact.json'), 'utf8'));
    expect(record.runtime).toEqual({ workers: 16 });
    expect(record.config).toEqual({ raw: lower(more.raw).outputPath(prefix), out: lower(more.model).outputPath(prefix), smoothing: 0.5 });
  });

  it('rebuild reruns exactly the named step and its downstream steps, under the same paths', async () => {
    const prefix = dir();
    const { r } = runner(prefix);
    await r.run([pipeline().evaluate]);
    const p = pipeline();
    expect(await states(r, [p.evaluate], { rebuild: ['model'] })).toEqual({ raw: 'cached', model: 'run', eval: 'run' });
    await r.run([p.evaluate], { rebuild: ['model'] });
    expect(p.calls).toEqual(['model', 'eval']);
    const all = pipeline();
    await r.run([all.evaluate], { rebuild: 'all' });
    expect(all.calls).toEqual(['raw', 'model', 'eval']);
  });
});

describe("fixed paths ('versioned' layout, pins): drift", () => {
  async function built(extra: StepRunnerOptions = {}) {
    const prefix = dir();
    const { r, logger } = runner(prefix, { layout: 'versioned', ...extra });
    await r.run([pipeline().evaluate]);
    return { prefix, r, logger };
  }

  it('drift of a built ancestor under a built target is found from the target alone, and is an error showing the diff and the fixes', async () => {
    const { prefix, r } = await built();
    const changed = pipeline({ smoothing: 5 });
    const plan = await r.plan([changed.evaluate]);
    const byName = Object.fromEntries(plan.steps.map((s) => [s.name, s]));
    expect([byName.raw?.state, byName.model?.state, byName.eval?.state]).toEqual(['cached', 'drifted', 'drifted']);
    expect(byName.model?.reason).toBe("built from another recipe: smoothing: 0.5 -> 5; the run would fail (CAIRN_DRIFT): bump the version, --rebuild it, or --accept-drift it");
    expect(byName.eval?.reason).toMatch(/^built from another recipe: dependency model@v1 changed;/);
    const err = (await r.run([changed.evaluate]).catch((e: unknown) => e)) as StepRunError;
    expect(err).toBeInstanceOf(StepRunError);
    expect(err.failures.map((f) => f.step).sort()).toEqual(['eval', 'model']);
    const model = err.failures.find((f) => f.step === 'model')?.error as Error;
    expect(hasCode(model, 'CAIRN_DRIFT')).toBe(true);
    expect(model.message).toBe(
      `Step "model@v1" lives at a fixed path (the 'versioned' layout), and its output at ${join(prefix, 'model/v1')} was built from another recipe than it has now:\n  smoothing: 0.5 -> 5\n` +
        `It is not served. Either bump the version of "model" (a new output beside the old one), rebuild it in place (cairn run --rebuild model; rebuild: ['model']), or serve the recorded output as it is (cairn run --accept-drift model; acceptDrift: ['model']).`,
    );
    expect(changed.calls).toEqual([]);
    // Nothing written is lost: the old output and its SUCCESS are where they were.
    expect(readFileSync(join(prefix, 'model/v1/model'), 'utf8')).toBe('3*0.5');
    expect(readFileSync(join(prefix, 'model/v1/.executor_status'), 'utf8').trim()).toBe('SUCCESS');
  });

  it('accepted drift is served; onDrift: warn serves with one warning per step, not two', async () => {
    const { r, logger } = await built();
    const changed = pipeline({ smoothing: 5 });
    expect(await states(r, [changed.evaluate], { acceptDrift: ['model', 'eval'] })).toEqual({ raw: 'cached', model: 'drifted', eval: 'drifted' });
    expect((await r.run([changed.evaluate], { acceptDrift: true })).counts).toEqual({ cached: 3 });
    expect(changed.calls).toEqual([]);
    expect(logger.lines.filter((l) => l.includes('drift accepted'))).toHaveLength(2);
    const warned = runner((await built()).prefix, { layout: 'versioned', onDrift: 'warn' });
    const again = pipeline({ smoothing: 5 });
    await warned.r.run([again.evaluate, again.model]);
    expect(warned.logger.lines.filter((l) => l.includes("model@v1: recipe drift") && l.includes('smoothing: 0.5 -> 5'))).toHaveLength(1);
    expect(warned.logger.lines.filter((l) => l.includes('eval@v1: recipe drift'))).toHaveLength(1);
    expect(again.calls).toEqual([]);
  });

  it('rebuild in place replaces the drifted output; then nothing drifts', async () => {
    const { prefix, r } = await built();
    const changed = pipeline({ smoothing: 5 });
    await r.run([changed.evaluate], { rebuild: ['model'] });
    expect(changed.calls).toEqual(['model', 'eval']);
    expect(readFileSync(join(prefix, 'model/v1/model'), 'utf8')).toBe('3*5');
    expect(await states(r, [changed.evaluate])).toEqual({ raw: 'not-examined', model: 'not-examined', eval: 'cached' });
  });

  it("a pin is a fixed path too; Marin's records are compared by their payload, not their hash", async () => {
    const prefix = dir();
    const { r } = runner(prefix);
    const make = (n: number) => apply({ name: 'shared', version: 'v1', pin: 'data/shared', inputs: { n, out: OUT }, fn: ({ n }: { n: number }) => n });
    await r.run([make(1)]);
    expect(await states(r, [make(2)])).toEqual({ shared: 'drifted' });
    // A record Marin wrote: no `cairn` field, md5 fingerprints, its payload in fingerprint_payload.
    const recordPath = join(prefix, 'data/shared/.artifact.json');
    const marin = { name: 'shared', version: 'v1', fingerprint: '0123abcd', output_path: join(prefix, 'data/shared'), fingerprint_payload: '{"n": 2, "out": "<output_path>"}' };
    writeFileSync(recordPath, JSON.stringify(marin, null, 2));
    expect(await states(r, [make(2)])).toEqual({ shared: 'cached' });
    expect(await states(r, [make(3)])).toEqual({ shared: 'drifted' });
  });
});
