/**
 * The slice of the API tests that runs against each built copy (ESM and CJS). Everything here
 * also has a source-level test in its package; these catch what only bundling changes: class
 * renames (`class _StepSpec`), brands, exports missing from an entry point, dual-package copies.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StepContext } from '@cairn/core';
import { afterAll, describe, expect, it } from 'vitest';

type Core = typeof import('@cairn/core');
type Runner = typeof import('@cairn/runner');
type Ssh = typeof import('@cairn/remote-ssh');

/** One built copy of the packages. */
export interface Built {
  readonly core: Core;
  readonly runner: Runner;
  readonly ssh: Ssh;
}

function thrown(f: () => unknown): Error & { code?: string; step?: string } {
  try {
    f();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected an error');
}

/** The files (as V8 sees them, before any source map) of the frames of the error `f` throws. */
function thrownFrom(f: () => unknown): string[] {
  const prev = Error.prepareStackTrace;
  Error.prepareStackTrace = (_e, sites) => sites.map((site) => String(site.getFileName()));
  try {
    f();
  } catch (err) {
    return (err as { stack: string[] }).stack;
  } finally {
    Error.prepareStackTrace = prev;
  }
  return [];
}

/** Defines the slice for the copy `load` returns; `file` is the built file its code must come from. */
export function apiSlice(label: string, file: RegExp, load: () => Promise<Built>): void {
  describe(`${label}: the built packages`, () => {
    let b: Built;
    const dirs: string[] = [];
    afterAll(() => {
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });
    const fn = () => 1;

    it('is the built code, not the TypeScript sources', async () => {
      b = await load();
      // The raw frames (vitest maps printed stacks back to src/ through dist's source maps).
      const frames = thrownFrom(() => b.core.apply({ name: '', version: 'v1', fn, inputs: {} }));
      expect(frames[0]).toMatch(file);
      expect(frames.some((f) => /packages\/core\/src\//.test(f))).toBe(false);
    });

    it('a lowered StepSpec in apply() inputs is CAIRN_BAD_DEPENDENCY (the bundle renames the class to _StepSpec)', () => {
      const { apply, lower, StepSpec, isStepSpec } = b.core;
      const spec = lower(apply({ name: 'inner', version: 'v1', fn, inputs: {} }));
      const err = thrown(() => apply({ name: 'outer', version: 'v1', fn, inputs: { x: spec } }));
      expect(err.code).toBe('CAIRN_BAD_DEPENDENCY');
      expect(err.message).toBe('Step "outer": inputs.x is a lowered StepSpec; pass the ArtifactStep handle from apply() instead.');
      expect(thrown(() => apply({ name: 'outer', version: 'v1', fn, inputs: { x: new StepSpec({ name: 'plain' }) } })).code).toBe('CAIRN_BAD_DEPENDENCY');
      expect(isStepSpec(spec)).toBe(true);
    });

    it('brands: isArtifactStep, isOut, isCairnError', () => {
      const { apply, isArtifactStep, isOut, OUT, isCairnError, CairnError } = b.core;
      expect(isArtifactStep(apply({ name: 'h', version: 'v1', fn, inputs: {} }))).toBe(true);
      expect(isOut(OUT)).toBe(true);
      expect(isOut({ __cairnOut: true })).toBe(false);
      expect(isCairnError(new CairnError('CAIRN_CONFIG', 'x'))).toBe(true);
    });

    it('identity matches the golden vector and the documented error codes are raised', () => {
      const { StepSpec, apply, lower, OUT } = b.core;
      expect(new StepSpec({ name: 'train', hashAttrs: { lr: 0.1 } }).hash).toBe('ca543f4f4d45a7a2'); // fixtures/golden/fingerprints.json
      const one = lower(apply({ name: 'tokenize', version: 'v1', fn, inputs: { out: OUT, vocab: 32000 } }));
      expect([one.fingerprint, one.hash]).toEqual(['0cc8ac8b57b44abb', 'cb3cb7853bd71ec5']); // fixtures/golden/lowered.json
      expect(thrown(() => apply({ name: 'a', version: 'v1', fn, inputs: {}, retires: 3 } as never)).code).toBe('CAIRN_UNKNOWN_OPTION');
      expect(thrown(() => apply({ name: 'a', version: 'v1', fn, inputs: {}, pin: '../../escape' })).code).toBe('CAIRN_INVALID_PATH');
      let deep: unknown = 1;
      for (let i = 0; i < 100_000; i++) deep = { a: deep };
      expect(thrown(() => apply({ name: 'a', version: 'v1', fn, inputs: { deep } })).code).toBe('CAIRN_TOO_DEEP');
      expect(thrown(() => lower([apply({ name: 'a', version: 'v1', fn, inputs: {}, pin: 'p' }), apply({ name: 'b', version: 'v1', fn, inputs: {}, pin: 'p' })])).code).toBe('CAIRN_DUPLICATE_STEP');
      expect(thrown(() => b.core.resolvePrefix('')).code).toBe('CAIRN_INVALID_PATH');
      expect(thrown(() => b.core.checkKnownKeys({ x: 1 }, ['y'], 'here')).code).toBe('CAIRN_UNKNOWN_OPTION');
    });

    it('the codec round-trips a graph', () => {
      const { apply, lower, encodeSpecs, decodeSpecs, OUT } = b.core;
      const a = apply({ name: 'a', version: 'v1', fn, inputs: { out: OUT } });
      const c = lower(apply({ name: 'c', version: 'v1', fn, inputs: { a, out: OUT } }));
      const [back] = decodeSpecs(encodeSpecs([c]));
      expect(back?.nameWithHash).toBe(c.nameWithHash);
      expect(back?.deps.map((d) => d.nameWithHash)).toEqual(c.deps.map((d) => d.nameWithHash));
    });

    it('StepRunner runs a pipeline, and a rerun runs nothing', async () => {
      const { apply, OUT } = b.core;
      const prefix = mkdtempSync(join(tmpdir(), 'cairn-dist-check-'));
      dirs.push(prefix);
      const ran: string[] = [];
      const raw = apply({ name: 'raw', version: 'v1', fn: () => (ran.push('raw'), 21), inputs: { out: OUT } });
      const twice = apply({ name: 'twice', version: 'v1', fn: (i: { raw: string }) => (ran.push('twice'), i.raw.length > 0 ? 42 : 0), inputs: { raw } });
      const runner = new b.runner.StepRunner({ prefix, logger: { info() {}, warn() {}, error() {} } });
      const [loaded] = await runner.load([twice]);
      expect(loaded?.value).toBe(42);
      expect(ran).toEqual(['raw', 'twice']);
      await runner.run([twice]);
      expect(ran).toEqual(['raw', 'twice']);
    });

    it('typed artifacts: kinds load through run/resolve and ctx.resolved; adopted data is never written to; bad values are typed errors', async () => {
      const { adopt, apply, artifacts, OUT } = b.core;
      const { run, StepRunner } = b.runner;
      const prefix = mkdtempSync(join(tmpdir(), 'cairn-dist-check-'));
      const source = mkdtempSync(join(tmpdir(), 'cairn-dist-check-source-'));
      dirs.push(prefix, source);
      writeFileSync(join(source, 'data.json'), '[1,2,3]');
      const quiet = { info() {}, warn() {}, error() {} };
      const numbers = adopt({ name: 'numbers', version: 'v1', source, kind: artifacts.json<number[]>() });
      const stats = apply({ name: 'stats', version: 'v1', fn: () => ({ n: 3 }), inputs: {}, artifact: artifacts.json<{ n: number }>() });
      const sum = apply({
        name: 'sum',
        version: 'v1',
        fn: async (i: { numbers: string; stats: string; out: string }, ctx: StepContext) => {
          const xs = await ctx.resolved(numbers);
          const st = await ctx.resolved(stats);
          return { sum: xs.reduce((a, c) => a + c, 0) * st.n, from: ctx.path(numbers) === i.numbers ? 'source' : 'elsewhere' };
        },
        inputs: { numbers, stats, out: OUT },
      });
      const [loaded] = await run(sum, { prefix, logger: quiet });
      expect(loaded.value).toEqual({ sum: 18, from: 'source' });
      expect((await new StepRunner({ prefix, logger: quiet }).resolve(stats)).value).toEqual({ n: 3 });
      expect(readdirSync(source)).toEqual(['data.json']);

      const asText = apply({ name: 'stats', version: 'v1', fn: () => ({ n: 3 }), inputs: {}, artifact: artifacts.text() });
      await expect(new StepRunner({ prefix, logger: quiet }).resolve(asText)).rejects.toMatchObject({ code: 'CAIRN_ARTIFACT_KIND', step: 'stats' });
      const bad = apply({ name: 'bad', version: 'v1', fn: () => ({ model: { fn: () => 1 } }), inputs: {} });
      const failed = (await run(bad, { prefix, logger: quiet }).catch((e: unknown) => e)) as { failures: { error: { code: string; message: string } }[] };
      expect(failed.failures[0]?.error.code).toBe('CAIRN_UNRECORDABLE_RESULT');
      expect(failed.failures[0]?.error.message).toContain('result.model.fn is a function');
      const gone = adopt({ name: 'gone', version: 'v1', source: join(source, 'missing') });
      const user = apply({ name: 'user', version: 'v1', fn: () => 1, inputs: { gone } });
      const missing = (await run(user, { prefix, logger: quiet }).catch((e: unknown) => e)) as { failures: { error: { code: string } }[] };
      expect(missing.failures.map((f) => f.error.code)).toEqual(['CAIRN_ADOPT_MISSING']);
    });

    it('the runner option validators are exported where the runner needs them', () => {
      expect(typeof b.core.checkExecutorName).toBe('function');
      expect(thrown(() => b.ssh.createSshExecutor({ hosts: [{ name: 'h', host: 'x', user: 'u', privateKey: 'k', workdir: '/x' }] } as never)).code).toBe('CAIRN_UNKNOWN_OPTION');
      expect(b.ssh.DEFAULT_WORK_DIR).toBe('~/.cache/cairn');
    });
  });
}
