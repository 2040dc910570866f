import { describe, expect, it } from 'vitest';
import { StepSpec, computeIdentities, identityText, joinPath } from '../src/index.js';

describe('StepSpec', () => {
  it('computes nameWithHash Merkle-style, independent of dependency order', () => {
    const a = new StepSpec({ name: 'a', hashAttrs: { x: 1 } });
    const b = new StepSpec({ name: 'b', hashAttrs: { y: 2 } });
    const c1 = new StepSpec({ name: 'c', deps: [a, b] });
    const c2 = new StepSpec({ name: 'c', deps: [b, a] });
    expect(c1.nameWithHash).toBe(c2.nameWithHash);
    expect(c1.nameWithHash).toMatch(/^c-[0-9a-f]{16}$/);
    expect(identityText(c1)).toBe(`{"deps":[${JSON.stringify(a.nameWithHash)},${JSON.stringify(b.nameWithHash)}],"hashAttrs":{},"name":"c"}`);
    const a2 = new StepSpec({ name: 'a', hashAttrs: { x: 2 } });
    expect(new StepSpec({ name: 'c', deps: [a2, b] }).nameWithHash).not.toBe(c1.nameWithHash);
  });

  it('keeps key order out of identity', () => {
    expect(new StepSpec({ name: 'a', hashAttrs: { p: 1, q: 2 } }).hash).toBe(new StepSpec({ name: 'a', hashAttrs: { q: 2, p: 1 } }).hash);
  });

  it('is deep-frozen', () => {
    const attrs = { nested: { v: 1 } };
    const s = new StepSpec({ name: 'a', hashAttrs: attrs });
    expect(Object.isFrozen(s)).toBe(true);
    expect(Object.isFrozen(s.hashAttrs.nested)).toBe(true);
    expect(Object.isFrozen(s.deps)).toBe(true);
    attrs.nested.v = 2; // the caller's object is not the spec's
    expect((s.hashAttrs.nested as { v: number }).v).toBe(1);
    expect(() => {
      (s as { name: string }).name = 'b';
    }).toThrow(TypeError);
  });

  it('joins output paths with exactly one slash; prefixes never enter identity', () => {
    const s = new StepSpec({ name: 'tok' });
    expect(s.outputPath('/data/')).toBe(`/data/${s.nameWithHash}`);
    expect(s.outputPath('gs://bucket//')).toBe(`gs://bucket/${s.nameWithHash}`);
    expect(new StepSpec({ name: 'x', overrideOutputPath: 'rel/dir' }).outputPath('/p/')).toBe('/p/rel/dir');
    expect(new StepSpec({ name: 'x', overrideOutputPath: '/abs/dir' }).outputPath('/p')).toBe('/abs/dir');
    expect(new StepSpec({ name: 'x', overrideOutputPath: 's3://b/k' }).outputPath('/p')).toBe('s3://b/k');
    expect(joinPath('gs://', 'a')).toBe('gs://a');
  });

  it('gives batch-hashed specs the same output paths, whatever the characters of name and prefix', () => {
    const names = ['tok', 'café', 'データ', 'a.b_c-d'];
    const specs = Array.from({ length: 32 }, (_, i) => new StepSpec({ name: names[i % names.length] as string, hashAttrs: { i } }));
    computeIdentities(specs); // one batch: hashes are read from its table, not from strings
    const prefixes = ['/data/', 'gs://bucket//', '/données', '/データ/x'];
    const paths = prefixes.map((prefix) => specs.map((s) => s.outputPath(prefix)));
    prefixes.forEach((prefix, k) => specs.forEach((s, i) => expect(paths[k]?.[i]).toBe(joinPath(prefix, s.nameWithHash))));
  });

  it('rejects bad dependencies, names and resources with the step named', () => {
    expect(() => new StepSpec({ name: 'c', deps: ['a' as never] })).toThrow(expect.objectContaining({ code: 'CAIRN_BAD_DEPENDENCY', step: 'c' }));
    expect(() => new StepSpec({ name: 'a/b' })).toThrow(expect.objectContaining({ code: 'CAIRN_INVALID_NAME' }));
    expect(() => new StepSpec({ name: 'r', resources: { cpu: -1 } })).toThrow(expect.objectContaining({ code: 'CAIRN_INVALID_SPEC', step: 'r' }));
    expect(() => new StepSpec({ name: 'r', retries: 1.5 })).toThrow(/retries/);
    expect(() => new StepSpec({ name: 'h', hashAttrs: { f: () => 1 } })).toThrow(/Step "h": cannot encode a function \(f\) at hashAttrs\.f/);
  });

  it('hashes large fresh graphs in one batch consistently with one-by-one hashing', () => {
    const mk = () => {
      const specs: StepSpec[] = [];
      for (let i = 0; i < 500; i++) {
        const deps = i === 0 ? [] : [specs[i - 1] as StepSpec, specs[Math.floor(i / 2)] as StepSpec];
        specs.push(new StepSpec({ name: `n${i}`, hashAttrs: { i }, deps: [...new Set(deps)] }));
      }
      return specs;
    };
    const batch = mk();
    const lastHash = (batch[499] as StepSpec).hash; // triggers one batch over 500 fresh specs
    const single = mk();
    for (const s of single) void s.hash; // dependencies first, one at a time
    expect((single[499] as StepSpec).hash).toBe(lastHash);
    expect(batch.map((s) => s.hash)).toEqual(single.map((s) => s.hash));
  });
});
