import { describe, expect, it } from 'vitest';
import { apply, canonicalize, DepSlot, lower, MAX_VALUE_DEPTH, OUT, resolveTemplate, StepSpec } from '../src/index.js';
import { thrown } from './helpers/thrown.js';

const fn = () => 1;

/** `{ a: { a: … leaf } }`, `levels` objects deep. */
function nested(levels: number, leaf: unknown = 1, wrap: (v: unknown) => unknown = (v) => ({ a: v })): unknown {
  let v = leaf;
  for (let i = 0; i < levels; i++) v = wrap(v);
  return v;
}

describe('deeply nested values are a typed error, never a stack overflow', () => {
  it('apply() with an input 100,000 levels deep: CAIRN_TOO_DEEP naming the step and the path', () => {
    // Issue 18: RangeError: Maximum call stack size exceeded, from apply().
    const err = thrown(() => apply({ name: 'deep', version: 'v1', fn, inputs: { cfg: nested(100_000) } }));
    expect(err.code).toBe('CAIRN_TOO_DEEP');
    expect(err.step).toBe('deep');
    expect(err.message).toMatch(/^Step "deep": inputs nests more than 256 levels deep \(the limit was hit at inputs\.cfg\.a\.a\.a\.a\.a…\(\d+ more levels\)….a\.a\.a\.a\)/);
  });

  it('arrays count as levels too', () => {
    const err = thrown(() => apply({ name: 'arr', version: 'v1', fn, inputs: nested(5000, 1, (v) => [v]) }));
    expect(err.code).toBe('CAIRN_TOO_DEEP');
    expect(err.message).toMatch(/inputs\[0\]\[0\]/);
  });

  it('a value at the limit is fine, through apply, lower, the payload and the inputs template', () => {
    const ok = nested(MAX_VALUE_DEPTH - 2);
    const spec = lower(apply({ name: 'edge', version: 'v1', fn, inputs: { x: ok, out: OUT } }));
    expect(spec.fingerprint).toMatch(/^[0-9a-f]{16}$/);
    expect((spec.inputs as { x: unknown }).x).toEqual(ok);
    expect(thrown(() => apply({ name: 'over', version: 'v1', fn, inputs: { x: nested(MAX_VALUE_DEPTH) } })).code).toBe('CAIRN_TOO_DEEP');
  });

  it('canonicalize and new StepSpec hashAttrs: CAIRN_TOO_DEEP with the path', () => {
    expect(thrown(() => canonicalize(nested(10_000), { path: 'value' })).code).toBe('CAIRN_TOO_DEEP');
    const err = thrown(() => new StepSpec({ name: 's', hashAttrs: { cfg: nested(100_000) } as never }));
    expect(err.code).toBe('CAIRN_TOO_DEEP');
    expect(err.message).toMatch(/^Step "s": hashAttrs nests more than 256 levels deep \(the limit was hit at hashAttrs\.cfg\.a/);
  });

  it('resources.hints: CAIRN_TOO_DEEP (hints travel to remote executors)', () => {
    const err = thrown(() => new StepSpec({ name: 's', resources: { hints: { h: nested(100_000) } as never } }));
    expect(err.code).toBe('CAIRN_TOO_DEEP');
    expect(err.message).toMatch(/resources\.hints\.h\.a/);
    const handle = apply({ name: 'h', version: 'v1', fn, inputs: {}, resources: { hints: { h: nested(100_000) } as never } });
    expect(thrown(() => lower(handle)).code).toBe('CAIRN_TOO_DEEP');
  });

  it('input resolution (a decoded template) is bounded too', () => {
    const template = nested(100_000, new DepSlot(0));
    const err = thrown(() => resolveTemplate(template, ['d-1'], '/out', { 'd-1': '/dep' }, 'resolve'));
    expect(err.code).toBe('CAIRN_TOO_DEEP');
    expect(err.message).toMatch(/^Step "resolve": inputs nests more than 256 levels/);
    expect(resolveTemplate({ x: [new DepSlot(0), OUT] }, ['d-1'], '/out', { 'd-1': '/dep' }, 'ok')).toEqual({ x: ['/dep', '/out'] });
  });
});

describe('sparse arrays are refused (documented in docs/identity.md)', () => {
  // eslint-disable-next-line no-sparse-arrays
  const sparse = [1, , 3];

  it('canonicalize: CAIRN_CANONICAL_VALUE at the hole', () => {
    const err = thrown(() => canonicalize({ xs: sparse }, { path: 'inputs', step: 'st' }));
    expect(err.code).toBe('CAIRN_CANONICAL_VALUE');
    expect(err.message).toBe('Step "st": cannot encode a hole at inputs.xs[1]: the array is sparse; fill the hole with null or remove it.');
    expect(thrown(() => canonicalize(new Array(3))).code).toBe('CAIRN_CANONICAL_VALUE');
  });

  it('through apply + lower and new StepSpec (issue 18: accepted silently)', () => {
    expect(thrown(() => lower(apply({ name: 'sp', version: 'v1', fn, inputs: { xs: sparse } }))).code).toBe('CAIRN_CANONICAL_VALUE');
    expect(thrown(() => new StepSpec({ name: 'sp', hashAttrs: { xs: sparse } })).code).toBe('CAIRN_CANONICAL_VALUE');
  });

  it('an explicit undefined element still encodes as null', () => {
    expect(canonicalize([undefined, 1])).toBe('[null,1]');
    const spec = lower(apply({ name: 'u', version: 'v1', fn, inputs: { xs: [undefined, 1] } }));
    expect(spec.fingerprintPayload).toBe('{"xs":[null,1]}');
  });
});
