import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CoreBackend, OrderResult } from '../src/backend-types.js';
import { jsBackend, nativeBackend } from '../src/backend.js';
import { byteTable, csrFromLists, reverseCsr } from '../src/graph/csr.js';
import { xxh64Hex, xxh64Ready } from '../src/hash/xxh64.js';

const golden = (file: string) => JSON.parse(readFileSync(new URL(`../../../fixtures/golden/${file}`, import.meta.url), 'utf8'));

interface TopoCase { name: string; deps: number[][]; order?: number[]; cycle?: number[] }
interface ExpandCall { roots: number[]; order?: number[]; cycle?: number[] }
interface ExpandCase { name: string; deps: number[][]; built: number[]; seen: number[]; calls: ExpandCall[]; seenAfter: number[] }
interface FpCase { name: string; nodes: { name: string; attrs: string; deps: number[] }[]; hashes?: string[]; cycle?: number[] }

const graphs: { toposort: TopoCase[]; expand: ExpandCase[] } = golden('graphs.json');
const fingerprints: { cases: FpCase[] } = golden('fingerprints.json');

const asPlain = (r: OrderResult) => (r.ok ? { order: [...r.order] } : { cycle: [...r.cycle] });
const marks = (n: number, idx: number[]) => {
  const m = new Uint8Array(n);
  for (const i of idx) m[i] = 1;
  return m;
};
const hexList = (hex: Uint8Array) => Array.from({ length: hex.length / 16 }, (_, i) => Buffer.from(hex.subarray(16 * i, 16 * i + 16)).toString());

const backends: CoreBackend[] = [jsBackend, ...(nativeBackend ? [nativeBackend] : [])];

describe.each(backends.map((b) => [b.kind, b] as const))('%s backend', (_kind, b) => {
  beforeAll(() => xxh64Ready);

  it('golden toposort vectors', () => {
    for (const c of graphs.toposort) {
      const want = c.order ? { order: c.order } : { cycle: c.cycle };
      expect(asPlain(b.toposort(csrFromLists(c.deps))), c.name).toEqual(want);
    }
  });

  it('golden expand vectors (seen shared across calls)', () => {
    for (const c of graphs.expand) {
      const n = c.deps.length;
      const g = csrFromLists(c.deps);
      const built = marks(n, c.built);
      const seen = marks(n, c.seen);
      for (const call of c.calls) {
        const want = call.order ? { order: call.order } : { cycle: call.cycle };
        expect(asPlain(b.expand(g, Uint32Array.from(call.roots), built, seen)), c.name).toEqual(want);
      }
      expect([...seen], `${c.name} seen`).toEqual([...marks(n, c.seenAfter)]);
    }
  });

  it('golden fingerprint vectors', () => {
    for (const c of fingerprints.cases) {
      const g = csrFromLists(c.nodes.map((x) => x.deps));
      const r = b.fingerprintAll(g, byteTable(c.nodes.map((x) => x.name)), byteTable(c.nodes.map((x) => x.attrs)));
      if (c.hashes) {
        expect(r.ok, c.name).toBe(true);
        if (r.ok) expect(hexList(r.hex), c.name).toEqual(c.hashes);
      } else {
        expect(r, c.name).toEqual({ ok: false, cycle: Uint32Array.from(c.cycle!) });
      }
    }
  });

  it('a single node hashes its identity bytes', () => {
    const r = b.fingerprintAll(csrFromLists([[]]), byteTable(['train']), byteTable(['{"lr":0.1}']));
    expect(r.ok && Buffer.from(r.hex).toString()).toBe(xxh64Hex('{"deps":[],"hashAttrs":{"lr":0.1},"name":"train"}'));
  });

  it('edge cases: empty graph, self-loop, duplicates', () => {
    expect(asPlain(b.toposort(csrFromLists([])))).toEqual({ order: [] });
    expect(asPlain(b.toposort(csrFromLists([[0]])))).toEqual({ cycle: [0] });
    expect(asPlain(b.toposort(csrFromLists([[], [0, 0], [1, 0, 1]])))).toEqual({ order: [0, 1, 2] });
    expect(asPlain(b.expand(csrFromLists([]), new Uint32Array(), new Uint8Array(), new Uint8Array()))).toEqual({ order: [] });
    const e = b.fingerprintAll(csrFromLists([]), byteTable([]), byteTable([]));
    expect(e.ok && e.hex.length).toBe(0);
  });

  it('deep chains do not overflow the stack', () => {
    const n = 100_000;
    const offsets = new Uint32Array(n + 1);
    for (let i = 1; i <= n; i++) offsets[i] = i - 1;
    const deps = new Uint32Array(n - 1).map((_, i) => i);
    const g = { offsets, deps };
    const t = b.toposort(g);
    expect(t.ok && t.order[n - 1]).toBe(n - 1);
    const x = b.expand(g, Uint32Array.of(n - 1), new Uint8Array(n), new Uint8Array(n));
    expect(x.ok && x.order.length).toBe(n);
    const names = byteTable(Array.from({ length: n }, (_, i) => `s${i}`));
    const attrs = byteTable(Array.from({ length: n }, () => '{}'));
    expect(b.fingerprintAll(g, names, attrs).ok).toBe(true);
  });

  const bad = (f: () => unknown, msg: RegExp) => expect(f).toThrow(expect.objectContaining({ code: 'CAIRN_GRAPH_INPUT', message: expect.stringMatching(msg) }));

  it('bad input throws CAIRN_GRAPH_INPUT naming the argument', () => {
    const g = csrFromLists([[], [0]]);
    bad(() => b.toposort({ offsets: new Uint32Array(), deps: new Uint32Array() }), /^offsets must have/);
    bad(() => b.toposort({ offsets: Uint32Array.of(1, 1), deps: Uint32Array.of(0) }), /^offsets\[0\] must be 0/);
    bad(() => b.toposort({ offsets: Uint32Array.of(0, 2, 1), deps: Uint32Array.of(0, 0) }), /^offsets must be monotone/);
    bad(() => b.toposort({ offsets: Uint32Array.of(0, 1), deps: new Uint32Array() }), /deps\.length/);
    bad(() => b.toposort({ offsets: Uint32Array.of(0, 1), deps: Uint32Array.of(1) }), /^deps\[0\] = 1 is out of range/);
    bad(() => b.toposort({ offsets: [0] as unknown as Uint32Array, deps: new Uint32Array() }), /^offsets must be a Uint32Array/);
    bad(() => b.toposort({ offsets: Int32Array.of(0) as unknown as Uint32Array, deps: new Uint32Array() }), /^offsets must be a Uint32Array/);
    bad(() => b.expand(g, Uint32Array.of(2), new Uint8Array(2), new Uint8Array(2)), /^roots\[0\] = 2 is out of range/);
    bad(() => b.expand(g, Uint32Array.of(1), new Uint8Array(1), new Uint8Array(2)), /^built must have/);
    bad(() => b.expand(g, Uint32Array.of(1), new Uint8Array(2), new Uint8Array(3)), /^seen must have/);
    bad(() => b.fingerprintAll(g, byteTable(['a']), byteTable(['{}', '{}'])), /^nameOffsets must have/);
    bad(() => b.fingerprintAll(g, byteTable(['a', 'b']), { offsets: Uint32Array.of(0, 2, 3), bytes: new Uint8Array(2) }), /attrs\.length/);
  });
});

describe('reverse CSR', () => {
  it('lists dependents in increasing index order, duplicates included', () => {
    const { start, dependents } = reverseCsr(csrFromLists([[], [0, 0], [1, 0]]));
    expect([...start]).toEqual([0, 3, 4, 4]);
    expect([...dependents]).toEqual([1, 1, 2, 2]);
  });
});

describe.runIf(nativeBackend)('the raw native binding', () => {
  it('throws CAIRN_NATIVE_BAD_INPUT with the argument named', async () => {
    const { default: loader } = await import('@cairn/native');
    const b = loader.binding!;
    expect(() => b.toposort(Uint32Array.of(0, 1), Uint32Array.of(7))).toThrow(expect.objectContaining({ code: 'CAIRN_NATIVE_BAD_INPUT', message: expect.stringContaining('deps[0]') }));
    expect(() => b.xxh64Update(new Uint8Array(3), 'x')).toThrow(expect.objectContaining({ code: 'CAIRN_NATIVE_BAD_INPUT', message: expect.stringContaining('state') }));
    const shared = new Uint8Array(4);
    expect(() => b.expand(Uint32Array.of(0, 0, 0, 0, 0), new Uint32Array(), Uint32Array.of(0), shared, shared)).toThrow(
      expect.objectContaining({ code: 'CAIRN_NATIVE_BAD_INPUT', message: expect.stringContaining('seen must not share memory') }),
    );
  });
});
