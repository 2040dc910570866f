import { describe, expect, it, vi } from 'vitest';
import { specInternals } from '../src/internal.js';
import {
  apply,
  canonicalize,
  ArtifactStep,
  CairnError,
  DepSlot,
  OUT,
  StepSpec,
  defineStep,
  describeDrift,
  fingerprintPayload,
  lower,
  resolveInputs,
} from '../src/index.js';

const noop = (_inputs: { data?: string; out?: string; n?: number }) => undefined;

describe('apply and lower', () => {
  it('finds dependencies anywhere in inputs, deduplicated in first-seen order', () => {
    const a = apply({ name: 'a', fn: (_: { out: string }) => 1, version: 'v1', inputs: { out: OUT } });
    const b = apply({ name: 'b', fn: (_: { out: string }) => 2, version: 'v1', inputs: { out: OUT } });
    const c = apply({
      name: 'c',
      fn: (_: { xs: string[]; nested: { y: string; z: string } }) => 3,
      version: 'v1',
      inputs: { xs: [b, a, b], nested: { y: a, z: 'lit' } },
    });
    expect(c.deps).toEqual([b, a]);
    const spec = c.lower();
    expect(spec.deps.map((d) => d.name)).toEqual(['b', 'a']);
    expect(spec.inputs).toEqual({ xs: [new DepSlot(0), new DepSlot(1), new DepSlot(0)], nested: { y: new DepSlot(1), z: 'lit' } });
    expect(spec.hashAttrs).toEqual({ version: 'v1', fingerprint: spec.fingerprint, deps: ['b@v1', 'a@v1'] });
    expect(spec.overrideOutputPath).toBe(`c/v1-${spec.hash}`);
    expect(specInternals.attrsCanonical(spec)).toBe(canonicalize(spec.hashAttrs));
    expect(spec.outputPath('/store/')).toBe(`/store/c/v1-${spec.hash}`);
  });

  it('is pure: never calls fn', () => {
    const fn = vi.fn((_: { n: number }) => 1);
    const h = apply({ name: 's', fn, version: 'v1', inputs: { n: 1 } });
    lower([h, h]);
    expect(fn).not.toHaveBeenCalled();
  });

  it('resolves OUT and dependency paths at run time', async () => {
    const a = apply({ name: 'a', fn: noop, version: 'v1', inputs: { out: OUT } });
    const seen: unknown[] = [];
    const b = apply({ name: 'b', fn: (i: { data: string; out: string; n: number }) => seen.push(i), version: 'v1', inputs: { data: a, out: OUT, n: 3 } });
    const spec = b.lower();
    const dep = spec.deps[0] as StepSpec;
    const inputs = resolveInputs(spec, '/p/b/v1', { [dep.nameWithHash]: '/p/a/v1' });
    expect(inputs).toEqual({ data: '/p/a/v1', out: '/p/b/v1', n: 3 });
    await spec.fn?.('/p/b/v1', { depPaths: { [dep.nameWithHash]: '/p/a/v1' } } as never);
    expect(seen).toEqual([{ data: '/p/a/v1', out: '/p/b/v1', n: 3 }]);
  });

  it('memoizes by handle identity: a lattice of 60 handles gives 60 specs', () => {
    // Two parents per level: without memoization the walk is 2^30 paths.
    let level: ArtifactStep<unknown>[] = [apply({ name: 'l0a', fn: noop, version: 'v1', inputs: {} }), apply({ name: 'l0b', fn: noop, version: 'v1', inputs: {} })];
    for (let i = 1; i < 30; i++) {
      const [x, y] = level as [ArtifactStep<unknown>, ArtifactStep<unknown>];
      const both = { a: x, b: y };
      level = [
        apply({ name: `l${i}a`, fn: (_: { a: string; b: string }) => 0, version: 'v1', inputs: both }),
        apply({ name: `l${i}b`, fn: (_: { a: string; b: string }) => 0, version: 'v1', inputs: both }),
      ];
    }
    const specs = lower(level);
    const all = new Set<StepSpec>();
    const stack = [...specs];
    while (stack.length) {
      const s = stack.pop() as StepSpec;
      if (all.has(s)) continue;
      all.add(s);
      stack.push(...s.deps);
    }
    expect(all.size).toBe(60);
    expect(specs[0]?.deps[0]).toBe(specs[1]?.deps[0]);
  });

  it('lowers a chain one million steps deep without overflowing the stack', () => {
    const fn = (_: { prev: string }) => 0;
    let h: ArtifactStep<unknown> = apply({ name: 's0', fn: noop, version: 'v1', inputs: {} });
    for (let i = 1; i < 1_000_000; i++) h = apply({ name: `s${i}`, fn, version: 'v1', inputs: { prev: h } });
    const spec = h.lower();
    expect(spec.name).toBe('s999999');
    expect(spec.nameWithHash).toMatch(/^s999999-[0-9a-f]{16}$/);
  }, 120_000);

  it('propagates upstream changes Merkle-style and ignores resources/executors', () => {
    const mk = (lr: number, extra: object = {}) => {
      const a = apply({ name: 'a', fn: (_: { lr: number }) => 0, version: 'v1', inputs: { lr } });
      return apply({ name: 'b', fn: (_: { a: string }) => 0, version: 'v1', inputs: { a }, ...extra }).lower();
    };
    const base = mk(0.1);
    expect(mk(0.1).nameWithHash).toBe(base.nameWithHash);
    expect(mk(0.2).nameWithHash).not.toBe(base.nameWithHash);
    expect(mk(0.1, { resources: { gpus: 2, memoryGb: 80 } }).nameWithHash).toBe(base.nameWithHash);
    expect(mk(0.1).fingerprint).toBe(base.fingerprint); // a dep's recipe enters via identity, not the config fingerprint
  });

  it('changes the consumer fingerprint on a dependency version bump', () => {
    const mk = (v: string) => {
      const a = apply({ name: 'a', fn: noop, version: v, inputs: {} });
      return apply({ name: 'b', fn: (_: { a: string }) => 0, version: 'v1', inputs: { a } }).lower();
    };
    expect(mk('v1').fingerprint).not.toBe(mk('v2').fingerprint);
  });

  it('refuses a fixed version on top of a mutable one', () => {
    const a = apply({ name: 'a', fn: noop, version: 'dev', inputs: {} });
    const b = apply({ name: 'b', fn: (_: { a: string }) => 0, version: '2026.11.30', inputs: { a } });
    expect(() => b.lower()).toThrow(expect.objectContaining({ code: 'CAIRN_MUTABLE_DEPENDENCY', step: 'b' }));
    const c = apply({ name: 'c', fn: (_: { a: string }) => 0, version: 'exp-dev', inputs: { a } });
    expect(c.lower().mutable).toBe(true);
  });

  it('refuses two different steps with one name and version, and merges identical ones', () => {
    const x1 = apply({ name: 'x', fn: (_: { n: number }) => 0, version: 'v1', inputs: { n: 1 } });
    const x2 = apply({ name: 'x', fn: (_: { n: number }) => 0, version: 'v1', inputs: { n: 2 } });
    const x3 = apply({ name: 'x', fn: (_: { n: number }) => 0, version: 'v1', inputs: { n: 1 } });
    expect(() => lower([x1, x2])).toThrow(expect.objectContaining({ code: 'CAIRN_DUPLICATE_STEP', step: 'x' }));
    const [s1, s3] = lower([x1, x3]);
    expect(s1).toBe(s3);
  });

  it('pins: expected fingerprint mismatch is an error naming the step', () => {
    const h = apply({ name: 'p', fn: (_: { n: number }) => 0, version: 'v1', inputs: { n: 1 }, expectedFingerprint: '0000000000000000' });
    expect(() => h.lower()).toThrow(expect.objectContaining({ code: 'CAIRN_FINGERPRINT_MISMATCH', step: 'p' }));
  });

  it('names the step and path of an unencodable input', () => {
    const h = apply({ name: 'train', fn: (_: { optimizer: { schedule: number[] } }) => 0, version: 'v1', inputs: { optimizer: { schedule: [1, 2, Number.NaN] } } });
    expect(() => h.lower()).toThrow(/Step "train": cannot encode NaN at inputs\.optimizer\.schedule\[2\]/);
  });

  it('leaves routing to the runner (which knows executors), and keeps the ref of a defineStep function', () => {
    // Whether "process" runs in this process is the executor's to say: the runner refuses the closure (CAIRN_INLINE_FN_REMOTE).
    const h = apply({ name: 'r', fn: (_: { n: number }) => 0, version: 'v1', inputs: { n: 1 }, executor: 'process' });
    expect(h.lower().ref).toBeUndefined();
    const exported = defineStep(import.meta.url, 'exported', (_: { n: number }) => 0);
    const ok = apply({ name: 'r2', fn: exported, version: 'v1', inputs: { n: 1 }, executor: 'process' }).lower();
    expect(ok.ref).toEqual({ module: import.meta.url, export: 'exported' });
  });

  it('validates names and versions', () => {
    for (const name of ['', 'a/b', '..', 'x..y', 'gs://b', 'a\nb', ' a', 'a\u0007']) {
      expect(() => apply({ name, fn: noop, version: 'v1', inputs: {} }), JSON.stringify(name)).toThrow(expect.objectContaining({ code: 'CAIRN_INVALID_NAME' }));
    }
    expect(() => apply({ name: 'ok', fn: noop, version: 'a/b', inputs: {} })).toThrow(/invalid version/);
    // Values of the wrong type still get a typed error (found by the reliability fuzzer).
    for (const bad of [0n, Symbol('s'), 3, null, {}]) {
      expect(() => apply({ name: bad as never, fn: noop, version: 'v1', inputs: {} })).toThrow(expect.objectContaining({ code: 'CAIRN_INVALID_NAME' }));
      expect(() => apply({ name: 'ok', fn: noop, version: bad as never, inputs: {} })).toThrow(expect.objectContaining({ code: 'CAIRN_INVALID_NAME' }));
    }
  });

  it('refuses a lowered StepSpec where a handle is expected', () => {
    const s = apply({ name: 'a', fn: noop, version: 'v1', inputs: {} }).lower();
    expect(() => apply({ name: 'b', fn: (_: { a: string }) => 0, version: 'v1', inputs: { a: s as never } })).toThrow(
      expect.objectContaining({ code: 'CAIRN_BAD_DEPENDENCY', step: 'b' }),
    );
    expect(() => lower(['nope' as never])).toThrow(expect.objectContaining({ code: 'CAIRN_BAD_DEPENDENCY' }));
  });

  it('captures provenance once per call', () => {
    const a = apply({ name: 'a', fn: noop, version: 'v1', inputs: {} });
    const b = apply({ name: 'b', fn: (_: { a: string }) => 0, version: 'v1', inputs: { a } });
    const spec = b.lower();
    expect(spec.provenance).toBeDefined();
    expect(spec.provenance).toBe(spec.deps[0]?.provenance);
    expect(typeof spec.provenance?.createdAt).toBe('string');
  });

  it('describeDrift gives field-level lines', () => {
    const lines = describeDrift('{"lr":0.1,"layers":[1,2],"old":1}', '{"lr":0.2,"layers":[1,2,3],"new":"x"}');
    expect(lines).toEqual(['layers: list of 2 -> list of 3', 'lr: 0.1 -> 0.2', 'new: (added) "x"', 'old: 1 (removed)']);
    const many = describeDrift(JSON.stringify(Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`k${i}`, i]))), '{}');
    expect(many).toHaveLength(11);
    expect(many[10]).toBe('…and 20 more');
    expect(describeDrift('{"a":1}', '{"a":1}')).toEqual([]);
  });

  it('CairnError carries code, step and cause', () => {
    const cause = new Error('root');
    const e = new CairnError('CAIRN_STORE', 'x', { step: 's', cause });
    expect(e.cause).toBe(cause);
    expect(e.step).toBe('s');
  });
});

describe('lowered apply specs', () => {
  const general = (h: ArtifactStep<unknown>): string =>
    canonicalize(h.inputs, { path: 'inputs', replace: (v) => (v instanceof ArtifactStep ? `<dep:${v.ident}>` : v === OUT ? '<OUT>' : undefined) });

  it('fingerprints inputs exactly as the general canonical encoder does', () => {
    const a = apply({ name: 'a"q', fn: noop, version: 'v\\1', inputs: {} });
    const cases: unknown[] = [
      { z: 1, a: 'x', m: [a, OUT, undefined, null, -0, 1.5e-7, true], u: undefined },
      { 10: 'ten', 9: 'nine', b: { d: [[a]], c: 'é😀' } },
      { 'ü': 1, 'u': 2, '\uE000': 3, '\u{1F600}': 4 },
      { when: new Date(0), big: 12n, bytes: new Uint8Array([1, 2]), set: new Set([2, 1]) },
      [a, { out: OUT }],
      'plain',
      7,
    ];
    for (const inputs of cases) {
      const h = apply({ name: 'p', fn: noop as never, version: 'v1', inputs: inputs as never });
      expect(fingerprintPayload(h)).toBe(general(h));
    }
    const reserved = apply({ name: 'r', fn: noop as never, version: 'v1', inputs: { __date__: 'x' } as never });
    expect(() => fingerprintPayload(reserved)).toThrow(/reserved/);
    const bad = apply({ name: 'n', fn: noop as never, version: 'v1', inputs: { x: { y: [Number.NaN] } } as never });
    expect(() => fingerprintPayload(bad)).toThrow(/inputs\.x\.y\[0\]/);
  });

  it('derives hashAttrs, inputs and fn on demand, frozen and stable', () => {
    const a = apply({ name: 'a', fn: noop, version: 'v1', inputs: { out: OUT } });
    const b = apply({ name: 'b', fn: (i: { a: string; out: string; n: number }) => `${i.a}|${i.out}`, version: 'v2', inputs: { a, out: OUT, n: 3 }, expectedFingerprint: undefined });
    const spec = b.lower();
    expect(spec.hashAttrs).toEqual({ version: 'v2', fingerprint: spec.fingerprint, deps: ['a@v1'] });
    expect(Object.keys(spec.hashAttrs)).toEqual(['version', 'fingerprint', 'deps']);
    expect(spec.hashAttrs).toBe(spec.hashAttrs);
    expect(Object.isFrozen(spec.hashAttrs)).toBe(true);
    expect(Object.isFrozen(spec.hashAttrs.deps)).toBe(true);
    expect(specInternals.attrsCanonical(spec)).toBe(canonicalize(spec.hashAttrs));
    expect(spec.inputs).toEqual({ a: DepSlot.of(0), out: OUT, n: 3 });
    expect(spec.inputs).toBe(spec.inputs);
    expect(spec.fn).toBe(spec.fn);
    expect(spec.overrideOutputPath).toBe(`b/v2-${spec.hash}`);
    expect(spec.fingerprintPayload).toBe('{"a":"<dep:a@v1>","n":3,"out":"<OUT>"}');
    expect(spec.writesRecord).toBe(false);
    const out = (spec.fn as NonNullable<StepSpec['fn']>)('/o/b', { depPaths: { [spec.deps[0]?.nameWithHash as string]: '/o/a' } } as never);
    expect(out).toBe('/o/a|/o/b');
  });

  it('refuses to resolve inputs that were changed after lowering; the object given to apply() is a copy', () => {
    const inputs = { n: 1, out: OUT };
    const h = apply({ name: 'm', fn: noop, version: 'v1', inputs });
    const spec = h.lower();
    // apply() kept a snapshot: changing the object given does not change the step.
    inputs.n = 2;
    expect(spec.inputs).toMatchObject({ n: 1 });
    // The copy is frozen; what it holds by reference (a Map) can still change, and is caught.
    expect(() => ((h.inputs as { n: number }).n = 3)).toThrow(TypeError);
    const table = new Map([['k', 1]]);
    const h2 = apply({ name: 'm2', fn: (_i: { table: Map<string, number>; out: string }) => undefined, version: 'v1', inputs: { table, out: OUT } });
    const spec2 = h2.lower();
    table.set('k', 2);
    expect(() => spec2.inputs).toThrow(/changed after lowering/);
  });

  it('still refuses two different steps with one name@version, and reuses identical ones', () => {
    const x1 = apply({ name: 'x', fn: noop, version: 'v1', inputs: { n: 1 } });
    const x2 = apply({ name: 'x', fn: noop, version: 'v1', inputs: { n: 2 } });
    const x3 = apply({ name: 'x', fn: noop, version: 'v2', inputs: { n: 2 } });
    const same = apply({ name: 'x', fn: noop, version: 'v1', inputs: { n: 1 } });
    expect(() => lower([x1, x2])).toThrow(/Two different steps/);
    const [s1, s3, s4] = lower([x1, x3, same]);
    expect(s4).toBe(s1);
    expect(s3).not.toBe(s1);
  });
});
