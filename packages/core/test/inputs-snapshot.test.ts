/**
 * Inputs are snapshotted at `apply()` (issue 28): mutating the object given as `inputs` afterwards
 * used to create a dependency `lower()` never saw (a cycle, even), and the step failed at run time
 * with "no output path for dependency #-1".
 */
import { describe, expect, it } from 'vitest';
import { apply, lower, OUT } from '../src/index.js';

const fn = () => 1;

describe('inputs snapshot', () => {
  it('a handle added to the inputs object after apply() is not an input (no hidden dependency, no cycle)', () => {
    const shared: Record<string, unknown> = { n: 1, out: OUT };
    const a = apply({ name: 'a', version: 'v1', fn, inputs: shared });
    const b = apply({ name: 'b', version: 'v1', fn, inputs: { a } });
    const before = lower(b).deps[0]!.fingerprint;
    shared.b = b; // a now "depends" on b, which depends on a
    (shared as { n: number }).n = 2;
    expect(a.inputs).toEqual({ n: 1, out: OUT });
    expect(a.deps).toEqual([]);
    const spec = lower(b);
    expect(spec.deps.map((d) => d.name)).toEqual(['a']);
    expect(spec.deps[0]!.fingerprint).toBe(before);
  });

  it('nested objects and arrays are copied; handles, OUT and other values are kept as they are', () => {
    const dep = apply({ name: 'dep', version: 'v1', fn, inputs: {} });
    const cfg = { lr: 0.1, layers: [1, 2], when: new Date(0), dep };
    const h = apply({ name: 'h', version: 'v1', fn, inputs: { cfg, list: [dep, OUT] } });
    const fp = lower(h).fingerprint;
    cfg.lr = 9;
    cfg.layers.push(3);
    const got = h.inputs as { cfg: typeof cfg; list: unknown[] };
    expect(got.cfg).not.toBe(cfg);
    expect(got.cfg.lr).toBe(0.1);
    expect(got.cfg.layers).toEqual([1, 2]);
    expect(got.cfg.dep).toBe(dep);
    expect(got.list[0]).toBe(dep);
    expect(got.list[1]).toBe(OUT);
    expect(lower(h).fingerprint).toBe(fp);
    // The copy is fixed: changing it throws instead of adding a hidden dependency.
    expect(Object.isFrozen(got.cfg) && Object.isFrozen(got.list)).toBe(true);
    expect(() => got.list.push(h)).toThrow(TypeError);
  });

  it('keeps a key named __proto__ as data, a null prototype, and a self-reference (reported when encoded)', () => {
    const odd = JSON.parse('{"__proto__": {"x": 1}, "y": 2}') as Record<string, unknown>;
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { z: 3 });
    const h = apply({ name: 'odd', version: 'v1', fn, inputs: { odd, bare } });
    const got = h.inputs as { odd: Record<string, unknown>; bare: Record<string, unknown> };
    expect(Object.keys(got.odd)).toEqual(['__proto__', 'y']);
    expect(Object.getPrototypeOf(got.odd)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(got.bare)).toBeNull();
    const loop: Record<string, unknown> = { a: 1 };
    loop.self = loop;
    const l = apply({ name: 'loop', version: 'v1', fn, inputs: { loop } });
    const copied = (l.inputs as { loop: Record<string, unknown> }).loop;
    expect(copied.self).toBe(copied);
    expect(() => lower(l)).toThrow(expect.objectContaining({ code: 'CAIRN_CANONICAL_VALUE' }));
  });
});
