/**
 * Property-based fuzzing of the runner's inputs (fast-check, fixed seed, bounded runs): runner
 * options and run options, valid or not, either work or throw a `CairnError`; a raw crash (any
 * other thrown value) or a value known invalid that is silently accepted fails the test. Plus the
 * issue-28 cases found by fuzzing: a `__proto__` input key reaches the step the same way on every
 * executor, and an unknown name in `rebuild`/`acceptDrift` is `CAIRN_NO_SUCH_STEP`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { apply, isCairnError } from '@cairn/core';
import { checkStepRunnerOptions, StepRunner } from '../src/index.js';
import { checkRunOptions } from '../src/options.js';
import { describeCfg, echo } from './fixtures/fuzz-steps.mjs';
import { rejection } from './helpers/thrown.js';

const SEED = 28;
const dir = mkdtempSync(join(tmpdir(), 'cairn-fuzz-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** What calling `f` did: accepted, a typed error, or a raw crash (anything else thrown). */
function outcome(f: () => unknown): 'accepted' | 'typed' | 'raw' {
  try {
    f();
    return 'accepted';
  } catch (err) {
    return isCairnError(err) ? 'typed' : 'raw';
  }
}

/** Any JS value, including the awkward ones (no prototype, deep nesting, symbols, functions, NaN). */
const anything = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.anything({ withNullPrototype: true, withBigInt: true, withDate: true, withMap: true, withSet: true, withTypedArray: true, withSparseArray: true, withBoxedValues: true }),
    fc.constantFrom(Symbol('s'), () => 1, NaN, -0, Infinity, 2 ** 31, 2 ** 53, '', ' ', '0x10', '~nobody/x', '__proto__', 'constructor'),
    fc.array(tie('value'), { maxLength: 3 }),
  ),
})).value;

describe('runner options', () => {
  const keys = ['prefix', 'maxConcurrent', 'executors', 'executorOptions', 'pools', 'defaultExecutor', 'remoteExecutor', 'leases', 'layout', 'onDrift', 'versions', 'infraRetries', 'store', 'logger', 'onEvent', 'nope'];

  it('any value for any key is accepted or a CairnError, never a raw crash', () => {
    const raw: unknown[] = [];
    fc.assert(
      fc.property(fc.constantFrom(...keys), anything, (key, value) => {
        const r = outcome(() => new StepRunner({ [key]: value, prefix: join(dir, 'p') } as never));
        if (r === 'raw') raw.push({ key, value });
        return r !== 'raw';
      }),
      { seed: SEED, numRuns: 600 },
    );
    expect(raw).toEqual([]);
  });

  it('values known to be invalid are refused (no silent acceptance)', () => {
    const invalid = fc.oneof(
      fc.record({ maxConcurrent: fc.oneof(fc.integer({ max: 0 }), fc.double({ noInteger: true }), fc.constant('4')) }),
      fc.record({ leases: fc.record({ pollMs: fc.integer({ min: 2 ** 31, max: 2 ** 40 }) }) }),
      fc.record({ leases: fc.record({ heartbeatMs: fc.integer({ min: 2 ** 31, max: 2 ** 40 }) }) }),
      fc.record({ leases: fc.record({ staleMs: fc.oneof(fc.integer({ max: 0 }), fc.constant(Number.NaN)) }) }),
      fc.record({ defaultExecutor: fc.stringMatching(/^[a-z]{3,8}$/).filter((s) => !['inline', 'threads', 'process'].includes(s)) }),
      fc.record({ remoteExecutor: fc.stringMatching(/^[a-z]{3,8}$/).filter((s) => !['inline', 'threads', 'process'].includes(s)) }),
      fc.record({ prefix: fc.constantFrom('', ' ', '\t', '~nobody/x', '~root') }),
      fc.record({ layout: fc.string().filter((s) => s !== 'content' && s !== 'versioned') }),
      fc.record({ pools: fc.record({ gpu: fc.oneof(fc.integer({ max: -1 }), fc.constant('2')) }) }),
      fc.record({ unknownKey: fc.anything() }),
    );
    const silent: unknown[] = [];
    fc.assert(
      fc.property(invalid, (options) => {
        const r = outcome(() => checkStepRunnerOptions({ prefix: join(dir, 'p'), ...options }));
        if (r !== 'typed') silent.push({ options, r });
        return r === 'typed';
      }),
      { seed: SEED, numRuns: 400 },
    );
    expect(silent).toEqual([]);
  });

  it('run options: any value is accepted or a CairnError; invalid ones are refused', () => {
    const keysRun = ['dryRun', 'forceRunFailed', 'maxConcurrent', 'signal', 'handleSigint', 'rebuild', 'acceptDrift', 'bogus'];
    let raw = 0;
    fc.assert(
      fc.property(fc.constantFrom(...keysRun), anything, (key, value) => {
        const r = outcome(() => checkRunOptions({ [key]: value }));
        if (r === 'raw') raw++;
        return r !== 'raw';
      }),
      { seed: SEED, numRuns: 600 },
    );
    expect(raw).toBe(0);
    const invalid = fc.oneof(
      fc.record({ rebuild: fc.oneof(fc.constant(''), fc.integer(), fc.array(fc.oneof(fc.constant(''), fc.integer(), fc.constant(null)), { minLength: 1 })) }),
      fc.record({ acceptDrift: fc.oneof(fc.constant('all'), fc.integer(), fc.array(fc.constant(''), { minLength: 1 })) }),
      fc.record({ maxConcurrent: fc.oneof(fc.integer({ max: 0 }), fc.constant('0x10')) }),
      fc.record({ dryRun: fc.oneof(fc.constant('yes'), fc.integer()) }),
    );
    let silent = 0;
    fc.assert(
      fc.property(invalid, (options) => {
        const ok = outcome(() => checkRunOptions(options)) === 'typed';
        if (!ok) silent++;
        return ok;
      }),
      { seed: SEED, numRuns: 300 },
    );
    expect(silent).toBe(0);
  });
});

describe('issue 28 cases', () => {
  it('a __proto__ input key reaches the step as its own data key on inline, threads and process alike', async () => {
    const cfg = JSON.parse('{"a":1,"__proto__":{"polluted":"yes"}}') as Record<string, unknown>;
    const seen: Record<string, unknown> = {};
    for (const executor of ['inline', 'threads', 'process']) {
      const runner = new StepRunner({ prefix: join(dir, `proto-${executor}`), logger: quiet });
      const [loaded] = await runner.load([apply({ name: 'cfg', fn: describeCfg, version: 'v1', executor, inputs: { cfg } })]);
      seen[executor] = loaded.value;
    }
    const expected = { own: ['a', '__proto__'], plainProto: true, inherited: null, ownProto: { polluted: 'yes' } };
    expect(seen).toEqual({ inline: expected, threads: expected, process: expected });
  }, 60_000);

  it('an unknown name in rebuild or acceptDrift is CAIRN_NO_SUCH_STEP naming the nearest step, before anything runs', async () => {
    const prefix = join(dir, 'names');
    const runner = new StepRunner({ prefix, logger: quiet });
    const train = apply({ name: 'train', fn: echo, version: 'v1', inputs: { n: 1 } });
    for (const options of [{ rebuild: ['trian'] }, { acceptDrift: ['trian'] }]) {
      const err = await rejection(runner.run([train], options));
      expect(err.code).toBe('CAIRN_NO_SUCH_STEP');
      expect(err.message).toContain('did you mean "train"?');
      const planErr = await rejection(Promise.resolve().then(() => runner.plan([train], options)));
      expect(planErr.code).toBe('CAIRN_NO_SUCH_STEP');
    }
    // Nothing ran.
    expect((await runner.plan([train])).steps.map((s) => s.state)).toEqual(['run']);
    // Known names still work: the step, name@version and nameWithHash.
    await runner.run([train]);
    for (const name of ['train', 'train@v1']) await runner.run([train], { rebuild: [name] });
  }, 60_000);
});
