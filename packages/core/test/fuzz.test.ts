/**
 * Property-based fuzzing of core's public inputs (fast-check, fixed seed, bounded runs): `apply`
 * options then `lower()`, prefixes, and the value codec. Anything either works or throws a
 * `CairnError`; a raw crash (any other thrown value) or a value known to be invalid that is
 * silently accepted fails the test. A `__proto__` input key is data everywhere.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { apply, isCairnError, lower, OUT, packValue, resolvePrefix, resolveTemplate, unpackValue } from '../src/index.js';
import { toTemplate } from '../src/template.js';

const SEED = 28;
const fn = (i: unknown) => i;

/** What calling `f` did: accepted, a typed error, or a raw crash (anything else thrown). */
function outcome(f: () => unknown): 'accepted' | 'typed' | 'raw' {
  try {
    f();
    return 'accepted';
  } catch (err) {
    return isCairnError(err) ? 'typed' : 'raw';
  }
}

/** Any value, the awkward ones included: no prototype, boxed, sparse, deep, symbols, functions. */
const anything = fc.oneof(
  fc.anything({ withNullPrototype: true, withBigInt: true, withDate: true, withMap: true, withSet: true, withTypedArray: true, withSparseArray: true, withBoxedValues: true, maxDepth: 4 }),
  fc.constantFrom(Symbol('s'), () => 1, NaN, -0, Infinity, '', ' ', '..', '/', '~nobody/x', '__proto__', Object.create(null) as object),
  fc.integer({ min: 1, max: 300 }).map((n) => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < n; i++) deep = [deep];
    return deep;
  }),
);

describe('apply() and lower()', () => {
  const keys = ['name', 'version', 'fn', 'inputs', 'pin', 'layout', 'resources', 'executor', 'expectedFingerprint', 'retries', 'timeoutMs', 'artifact', 'runtime', 'bogus'];

  it('any value for any option is accepted or a CairnError, never a raw crash', () => {
    const raw: unknown[] = [];
    fc.assert(
      fc.property(fc.constantFrom(...keys), anything, (key, value) => {
        const r = outcome(() => lower(apply({ name: 'step', version: 'v1', fn, inputs: { a: 1 }, [key]: value } as never)));
        if (r === 'raw') raw.push({ key, value });
        return r !== 'raw';
      }),
      { seed: SEED, numRuns: 1500 },
    );
    expect(raw).toEqual([]);
  });

  it('any inputs value is accepted or a CairnError', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 6 }), anything, { maxKeys: 4 }), (inputs) => outcome(() => lower(apply({ name: 's', version: 'v1', fn, inputs }))) !== 'raw'),
      { seed: SEED, numRuns: 800 },
    );
  });

  it('options known to be invalid are refused (no silent acceptance)', () => {
    const invalid = fc.oneof(
      fc.record({ name: fc.oneof(fc.constantFrom('', '.', '..', 'a/b', ' ', '~x'), fc.integer(), fc.constant(null)) }),
      fc.record({ version: fc.oneof(fc.constantFrom('', 'a/b'), fc.integer(), fc.constant(null)) }),
      fc.record({ fn: fc.oneof(fc.integer(), fc.string(), fc.constant(null)) }),
      fc.record({ retries: fc.oneof(fc.integer({ max: -1 }), fc.double({ noInteger: true, noNaN: true }), fc.constant('1')) }),
      fc.record({ timeoutMs: fc.oneof(fc.integer({ max: 0 }), fc.constant(Number.NaN), fc.constant('5')) }),
      fc.record({ pin: fc.constantFrom('', '.', '~/x', '~nobody/x', '../out') }),
      fc.record({ inputs: fc.oneof(fc.constant(Symbol('s')), fc.constant(() => 1), fc.constant(new (class Custom {})())) }),
      fc.record({ bogus: fc.anything() }),
    );
    const silent: unknown[] = [];
    fc.assert(
      fc.property(invalid, (over) => {
        const r = outcome(() => lower(apply({ name: 'step', version: 'v1', fn, inputs: { a: 1 }, ...over } as never)));
        if (r !== 'typed') silent.push({ over, r });
        return r === 'typed';
      }),
      { seed: SEED, numRuns: 500 },
    );
    expect(silent).toEqual([]);
  });
});

describe('prefixes', () => {
  it('any value is a resolved path or a CairnError; empty, blank and ~user are refused', () => {
    fc.assert(
      fc.property(anything, (v) => outcome(() => resolvePrefix(v, 'prefix', '/tmp')) !== 'raw'),
      { seed: SEED, numRuns: 800 },
    );
    fc.assert(
      fc.property(fc.oneof(fc.constant(''), fc.stringMatching(/^[ \t\n]{1,4}$/), fc.stringMatching(/^~[a-z]{1,8}(\/[a-z]{0,4})?$/)), (v) => outcome(() => resolvePrefix(v, 'prefix', '/tmp')) === 'typed'),
      { seed: SEED, numRuns: 300 },
    );
  });
});

describe('values through templates and the codec', () => {
  /** JSON data whose objects may carry a `__proto__` key (JSON.parse makes it an own key). */
  const json = fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.parse(JSON.stringify(v).replace(/^\{\}$/, '{"__proto__":{"p":1}}').replace(/^\{"/, '{"__proto__":{"p":1},"')) as unknown);

  it('JSON data (with __proto__ keys) survives toTemplate, resolveTemplate and pack/unpack as own data', () => {
    fc.assert(
      fc.property(json, (v) => {
        const resolved = resolveTemplate(toTemplate(v, []), [], '/out', {}, 's');
        const decoded = unpackValue(packValue(resolved));
        // Compared as JSON text: own keys in order, a __proto__ key included.
        return JSON.stringify(resolved) === JSON.stringify(v) && JSON.stringify(decoded) === JSON.stringify(v);
      }),
      { seed: SEED, numRuns: 500 },
    );
  });

  it('a __proto__ input key is the step\'s own data key and never its prototype', () => {
    const cfg = JSON.parse('{"a":1,"__proto__":{"polluted":true}}') as Record<string, unknown>;
    const spec = lower(apply({ name: 's', version: 'v1', fn, inputs: { cfg, out: OUT } }));
    const resolved = resolveTemplate(unpackValue(packValue(spec.inputs)), [], '/out', {}, 's') as { cfg: Record<string, unknown> };
    expect(Object.keys(resolved.cfg)).toEqual(['a', '__proto__']);
    expect(Object.getPrototypeOf(resolved.cfg)).toBe(Object.prototype);
    expect((resolved.cfg as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.getOwnPropertyDescriptor(resolved.cfg, '__proto__')?.value).toEqual({ polluted: true });
  });
});
