import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { apply, ArtifactStep, canonicalize, fingerprintPayload, isArtifactStep, isOut, lower, OUT, StepSpec } from '../src/index.js';
import { getBackend, jsBackend, nativeBackend } from '../src/backend.js';
import { csrFromLists } from '../src/graph/csr.js';
import { computeIdentities, identityText } from '../src/identity.js';

// Lowering writes payloads with its own fast encoder and lets the backend derive hashAttrs
// and step hashes from packed tables. These tests hold both to the definitions: the general
// canonical encoder, and identities computed the long way through plain StepSpecs.

const noop = () => undefined;

function general(h: ArtifactStep<unknown>): string {
  return canonicalize(h.inputs, {
    path: 'inputs',
    step: h.name,
    replace: (v) => (isArtifactStep(v) ? `<dep:${v.ident}>` : isOut(v) ? '<OUT>' : undefined),
  });
}

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0) / 2 ** 32);
}

const STRINGS = ['', 'a', 'plain text', 'q"uote', 'back\\slash', 'tab\t', 'nl\n', '\u0001', 'é', '日本', '😀', '\uE000', '\uFF5E', 'x'.repeat(100)];
const KEYS = ['a', 'b', 'z', 'A', '10', '9', '', 'é', '\uE000', '\u{1F600}', 'ab', '__x', '__cairnOut', '_'];
const NUMBERS = [0, -0, 1, -1, 7, 42, 1e21, 1e-7, 1.5, -2.25, 2 ** 53, 2 ** 53 + 2, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 123456789];

function randomValue(r: () => number, deps: ArtifactStep<unknown>[], depth: number): unknown {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const k = Math.floor(r() * (depth > 3 ? 7 : 10));
  switch (k) {
    case 0: return pick(STRINGS);
    case 1: return pick(NUMBERS);
    case 2: return r() < 0.5;
    case 3: return null;
    case 4: return deps.length ? pick(deps) : OUT;
    case 5: return OUT;
    case 6: return r() < 0.1 ? undefined : Math.floor(r() * 1000);
    case 7:
    case 8: {
      const o: Record<string, unknown> = {};
      const n = Math.floor(r() * 5);
      for (let i = 0; i < n; i++) o[pick(KEYS)] = randomValue(r, deps, depth + 1);
      return o;
    }
    default:
      return Array.from({ length: Math.floor(r() * 4) }, () => randomValue(r, deps, depth + 1));
  }
}

describe('lowered fingerprints and identities', () => {
  it('the fast payload encoder writes what the general canonical encoder writes (2,000 random inputs)', () => {
    const r = rng(7);
    const deps = [apply({ name: 'd0', fn: noop, version: 'v1', inputs: {} }), apply({ name: 'd"1', fn: noop, version: 'v\\2', inputs: {} })];
    for (let i = 0; i < 2000; i++) {
      const inputs = { v: randomValue(r, deps, 0) };
      const h = apply({ name: `s${i}`, fn: noop as never, version: 'v1', inputs: inputs as never });
      expect(fingerprintPayload(h), JSON.stringify(inputs)).toBe(general(h));
      expect(h.lower().fingerprint).toBe(getBackend().xxh64Hex(general(h)));
    }
  });

  it('a plain object with a true __cairnOut key is data, not OUT (OUT is recognised by its symbol brand)', () => {
    const h = apply({ name: 'o', fn: noop as never, version: 'v1', inputs: { x: { __cairnOut: true }, y: OUT } as never });
    expect(fingerprintPayload(h)).toBe('{"x":{"__cairnOut":true},"y":"<OUT>"}');
  });

  it('step hashes equal those of plain StepSpecs built from hashAttrs, on every backend', () => {
    const r = rng(11);
    const handles: ArtifactStep<unknown>[] = [];
    for (let i = 0; i < 300; i++) {
      const deps = Array.from({ length: Math.floor(r() * 4) }, () => handles[Math.floor(r() * handles.length)]).filter((d): d is ArtifactStep<unknown> => d !== undefined);
      const expected = r() < 0.05;
      const h = apply({
        name: i % 7 === 0 ? `s"${i}é` : `s${i}`,
        fn: noop as never,
        version: i % 5 === 0 ? `v\\${i % 3}` : 'v1',
        inputs: { deps, n: i, tag: randomValue(r, [], 2) } as never,
      });
      handles.push(
        expected
          ? apply({ name: h.name, fn: noop as never, version: h.version, inputs: h.inputs as never, expectedFingerprint: h.lower().fingerprint as string })
          : h,
      );
    }
    const specs = lower(handles);
    // The long way: every spec rebuilt as a plain StepSpec from its own hashAttrs.
    const plain = new Map<StepSpec, StepSpec>();
    const rebuild = (s: StepSpec): StepSpec => {
      let p = plain.get(s);
      if (!p) {
        p = new StepSpec({ name: s.name, hashAttrs: s.hashAttrs, deps: s.deps.map(rebuild) });
        plain.set(s, p);
      }
      return p;
    };
    for (const s of specs) {
      expect(s.hash).toBe(rebuild(s).hash);
      expect(s.fingerprint).toBe(getBackend().xxh64Hex(s.fingerprintPayload as string));
    }
  });

  it('merges equal steps from different handles at any depth, and dependents share the merged spec', () => {
    const make = () => {
      const a = apply({ name: 'a', fn: noop, version: 'v1', inputs: { n: 1 } });
      return apply({ name: 'b', fn: noop as never, version: 'v1', inputs: { a } as never });
    };
    const b1 = make();
    const b2 = make();
    const top = apply({ name: 'top', fn: noop as never, version: 'v1', inputs: { x: b1, y: b2 } as never });
    const spec = top.lower();
    expect(spec.deps.length).toBe(2);
    expect(spec.deps[0]).toBe(spec.deps[1]);
    expect(spec.deps[0]?.deps[0]?.name).toBe('a');
    const plainA = new StepSpec({ name: 'a', hashAttrs: spec.deps[0]?.deps[0]?.hashAttrs });
    const plainB = new StepSpec({ name: 'b', hashAttrs: spec.deps[0]?.hashAttrs, deps: [plainA] });
    const plainTop = new StepSpec({ name: 'top', hashAttrs: spec.hashAttrs, deps: [plainB, plainB] });
    expect(spec.hash).toBe(plainTop.hash);
  });

  it('upstream specs are made on first use, once: the same objects from every path', () => {
    const a = apply({ name: 'a', fn: noop, version: 'v1', inputs: {} });
    const b = apply({ name: 'b', fn: noop as never, version: 'v1', inputs: { a } as never });
    const c = apply({ name: 'c', fn: noop as never, version: 'v1', inputs: { a, b } as never });
    const [sb, sc] = lower([b, c]);
    expect(sc?.deps[1]).toBe(sb);
    expect(sc?.deps[0]).toBe(sb?.deps[0]);
    expect(sc?.deps).toBe(sc?.deps);
    expect(Object.isFrozen(sc?.deps[0])).toBe(true);
    expect(sc?.deps[0]?.nameWithHash).toBe(new StepSpec({ name: 'a', hashAttrs: sc?.deps[0]?.hashAttrs }).nameWithHash);
  });

  it('computeIdentities hashes on top of already-hashed specs exactly as in one pass', () => {
    const build = () => {
      const specs: StepSpec[] = [];
      for (let i = 0; i < 120; i++) {
        const deps = i === 0 ? [] : [specs[i - 1] as StepSpec, specs[(i * 7) % i] as StepSpec];
        specs.push(new StepSpec({ name: i % 3 ? `p${i}` : `p"${i}`, hashAttrs: { i }, deps: [...new Set(deps)] }));
      }
      return specs;
    };
    const once = build();
    computeIdentities([once[119] as StepSpec]);
    const staged = build();
    computeIdentities([staged[10] as StepSpec]); // one by one (few)
    computeIdentities([staged[70] as StepSpec]); // a batch resting on hashed specs
    computeIdentities([staged[119] as StepSpec]);
    expect(staged.map((s) => s.nameWithHash)).toEqual(once.map((s) => s.nameWithHash));
    // Lists given dependencies first (no walk), and lists that need one: out of order, with a
    // repeat, with an already-hashed spec.
    const chunked = build();
    for (let i = 0; i < 120; i += 40) computeIdentities(chunked.slice(i, i + 40));
    expect(chunked.map((s) => s.nameWithHash)).toEqual(once.map((s) => s.nameWithHash));
    const mixed = build();
    computeIdentities(mixed.slice(0, 30).reverse());
    computeIdentities([...mixed.slice(30, 60), mixed[31] as StepSpec]);
    computeIdentities([mixed[10] as StepSpec, ...mixed.slice(60, 120)]);
    expect(mixed.map((s) => s.nameWithHash)).toEqual(once.map((s) => s.nameWithHash));
    // And against the definition, spec by spec.
    for (const s of once) expect(s.hash).toBe(getBackend().xxh64Hex(identityText(s)));
  });

  it('refuses bad retries, timeouts and resources anywhere in the graph at lower() time', () => {
    const bad = [{ retries: -1 }, { timeoutMs: 0 }, { resources: { cpu: -2 } }];
    for (const opts of bad) {
      const inner = apply({ name: 'inner', fn: noop, version: 'v1', inputs: {}, ...(opts as object) });
      const top = apply({ name: 'top', fn: noop as never, version: 'v1', inputs: { inner } as never });
      expect(() => top.lower(), JSON.stringify(opts)).toThrow(expect.objectContaining({ code: 'CAIRN_INVALID_SPEC', step: 'inner' }));
    }
  });

  it('golden lowered-step vectors, on every backend', () => {
    const golden = JSON.parse(readFileSync(new URL('../../../fixtures/golden/lowered.json', import.meta.url), 'utf8'));
    type Node = { name: string; version: string; payload: string; deps: number[]; expected?: string };
    for (const b of [jsBackend, nativeBackend]) {
      if (!b) continue;
      for (const c of golden.cases as { name: string; nodes: Node[]; fingerprints: string[]; hashes: string[]; paths: string[] }[]) {
        const nodes = c.nodes;
        const versionList = [...new Set(nodes.map((x) => x.version))];
        const fingerprints = new Uint8Array(16 * nodes.length);
        b.xxh64HexMany(table(nodes.map((x) => x.payload)), fingerprints, 0);
        expect(Buffer.from(fingerprints).toString(), `${b.kind}: ${c.name}`).toBe(c.fingerprints.join(''));
        const hashes = b.loweredIdentities({
          graph: csrFromLists(nodes.map((x) => x.deps)),
          names: table(nodes.map((x) => x.name)),
          versionOf: Uint32Array.from(nodes, (x) => versionList.indexOf(x.version)),
          versions: table(versionList),
          fingerprints,
          extras: table(nodes.map((x) => (x.expected === undefined ? '' : `,"expectedFingerprint":${JSON.stringify(x.expected)}`))),
        });
        expect(Buffer.from(hashes).toString(), `${b.kind}: ${c.name}`).toBe(c.hashes.join(''));
        const paths = nodes.map((x, i) => `${x.name}/${x.version}-${Buffer.from(hashes.subarray(16 * i, 16 * i + 16)).toString()}`);
        expect(paths, `${b.kind}: ${c.name}`).toEqual(c.paths);
      }
    }
  });

  it('golden default locations: lower() puts apply steps at paths[i] (layout content), or name/version (versioned)', () => {
    const golden = JSON.parse(readFileSync(new URL('../../../fixtures/golden/lowered.json', import.meta.url), 'utf8'));
    const chain = (golden.cases as { name: string; paths: string[] }[]).find((c) => c.name === 'chain') as { paths: string[] };
    const load = apply({ name: 'load', fn: noop, version: '2026.11.30', inputs: { path: 'data.csv' } });
    const clean = apply({ name: 'clean', fn: noop, version: 'v2', inputs: { in: load, out: OUT } });
    const train = apply({ name: 'train', fn: noop, version: 'v3dev', inputs: { data: clean, lr: 0.001 } });
    // Lowered with the loaded backend (the vectors above hold for both).
    const spec = lower(train);
    const specs = [spec.deps[0]?.deps[0], spec.deps[0], spec] as StepSpec[];
    expect(specs.map((s) => s.overrideOutputPath)).toEqual(chain.paths);
    expect(specs.map((s) => s.outputPath('/store/'))).toEqual(chain.paths.map((p) => `/store/${p}`));
    expect(specs.every((s) => !s.fixedPath)).toBe(true);
    const versioned = lower(train, { layout: 'versioned' });
    expect(versioned.outputPath('/store')).toBe('/store/train/v3dev');
    expect(versioned.fixedPath).toBe(true);
    expect(versioned.nameWithHash).toBe(spec.nameWithHash); // a path never enters identity
    const own = apply({ name: 'own', fn: noop, version: 'v1', inputs: { clean }, layout: 'versioned' });
    expect(lower(own).overrideOutputPath).toBe('own/v1');
    expect(lower(own).deps[0]?.overrideOutputPath).toBe(chain.paths[1]);
    expect(lower(own, { layout: 'content' }).overrideOutputPath).toBe('own/v1'); // the step's own layout wins
  });

  it('golden lowered-step vectors through loweredIdentitiesPacked, some hashes known, some fingerprints from payloads, on every backend', () => {
    const golden = JSON.parse(readFileSync(new URL('../../../fixtures/golden/lowered.json', import.meta.url), 'utf8'));
    type Node = { name: string; version: string; payload: string; deps: number[]; expected?: string };
    for (const b of [jsBackend, nativeBackend]) {
      if (!b) continue;
      for (const c of golden.cases as { name: string; nodes: Node[]; fingerprints: string[]; hashes: string[] }[]) {
        const nodes = c.nodes;
        // Every node computed, then each node's dependencies given as known (as a lowering
        // session's call gives them); the fingerprints given, or the last half's from payloads.
        const givens = [new Set<number>(), ...nodes.map((x) => new Set(x.deps))];
        for (const given of givens) {
          for (const p of [0, nodes.length - (nodes.length >> 1)]) {
            const { words, bytes, fingerprintsAt, hashesAt } = packed(nodes, c.fingerprints, c.hashes, given, p);
            b.loweredIdentitiesPacked(words, bytes);
            const text = (at: number) => Buffer.from(bytes.subarray(at, at + 16 * nodes.length)).toString();
            expect(text(hashesAt), `${b.kind}: ${c.name}`).toBe(c.hashes.join(''));
            expect(text(fingerprintsAt), `${b.kind}: ${c.name}`).toBe(c.fingerprints.join(''));
          }
        }
        if (nodes.length === 0) continue;
        const { words, bytes } = packed(nodes, c.fingerprints, c.hashes, new Set(), 1);
        expect(() => b.loweredIdentitiesPacked(words.subarray(0, words.length - 9), bytes), b.kind).toThrow(expect.objectContaining({ code: 'CAIRN_GRAPH_INPUT' }));
        expect(() => b.loweredIdentitiesPacked(words, bytes.subarray(0, 10)), b.kind).toThrow(expect.objectContaining({ code: 'CAIRN_GRAPH_INPUT' }));
        words[3] = nodes.length + 1;
        expect(() => b.loweredIdentitiesPacked(words, bytes), b.kind).toThrow(expect.objectContaining({ code: 'CAIRN_GRAPH_INPUT' }));
      }
    }
  });

  it('duplicateSteps: both backends report each repeat with its first occurrence', () => {
    const names = ['a', 'b', 'a', 'c', 'a', 'b', 'é', 'é'];
    const versionOf = new Uint32Array([0, 0, 0, 0, 1, 0, 0, 0]);
    for (const b of [jsBackend, nativeBackend]) {
      if (!b) continue;
      expect([...b.duplicateSteps(table(names), versionOf)]).toEqual([2, 0, 5, 1, 7, 6]);
      expect(() => b.duplicateSteps(table(names), new Uint32Array(2))).toThrow(expect.objectContaining({ code: 'CAIRN_GRAPH_INPUT' }));
    }
  });
});

function table(strings: readonly string[]): { offsets: Uint32Array; bytes: Uint8Array } {
  const parts = strings.map((s) => Buffer.from(s, 'utf8'));
  const offsets = new Uint32Array(strings.length + 1);
  parts.forEach((p, i) => (offsets[i + 1] = (offsets[i] as number) + p.length));
  return { offsets, bytes: Buffer.concat(parts) };
}

/**
 * The packed tables of `loweredIdentitiesPacked` for `nodes` (one version entry per node), the
 * nodes of `given` with their hashes known, the last `p` with their payloads instead of their
 * fingerprints; 8 words and 40 bytes of junk after, which it ignores.
 */
function packed(
  nodes: readonly { name: string; version: string; payload: string; deps: number[]; expected?: string }[],
  fingerprints: readonly string[],
  hashes: readonly string[],
  given: ReadonlySet<number>,
  p: number,
): { words: Uint32Array; bytes: Uint8Array; fingerprintsAt: number; hashesAt: number } {
  const n = nodes.length;
  const deps = nodes.flatMap((x) => x.deps);
  const names = table(nodes.map((x) => x.name));
  const versions = table(nodes.map((x) => x.version));
  const extras = table(nodes.map((x) => (x.expected === undefined ? '' : `,"expectedFingerprint":${JSON.stringify(x.expected)}`)));
  const payloads = table(nodes.slice(n - p).map((x) => x.payload));
  const offsets = [0];
  for (const x of nodes) offsets.push((offsets[offsets.length - 1] as number) + x.deps.length);
  const words = Uint32Array.from([n, deps.length, n, p, ...offsets, ...deps, ...names.offsets, ...nodes.map((_, i) => i), ...versions.offsets, ...extras.offsets, ...payloads.offsets, ...new Array(8).fill(7)]);
  const fps = fingerprints.map((f, i) => (i < n - p ? f : '?'.repeat(16))).join('');
  const known = nodes.map((_, i) => (given.has(i) ? (hashes[i] as string) : '\0'.repeat(16))).join('');
  const parts = [names.bytes, versions.bytes, extras.bytes, payloads.bytes, Buffer.from(fps), Buffer.from(known, 'latin1')];
  const bytes = new Uint8Array(Buffer.concat([...parts, Buffer.alloc(40, 0x61)]));
  const fingerprintsAt = parts.slice(0, 4).reduce((a, x) => a + x.length, 0);
  return { words, bytes, fingerprintsAt, hashesAt: fingerprintsAt + 16 * n };
}
