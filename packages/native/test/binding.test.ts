import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import loader from '../index.js';

// The raw binding against the shared golden vectors. The TypeScript side, the parity test and
// the loader's environment handling live in packages/core/test.
const golden = (file: string) => JSON.parse(readFileSync(new URL(`../../../fixtures/golden/${file}`, import.meta.url), 'utf8'));

function csr(lists: number[][]) {
  const offsets = new Uint32Array(lists.length + 1);
  lists.forEach((l, i) => (offsets[i + 1] = offsets[i]! + l.length));
  return { offsets, deps: Uint32Array.from(lists.flat()) };
}
function table(items: string[]) {
  const parts = items.map((s) => Buffer.from(s, 'utf8'));
  const offsets = new Uint32Array(parts.length + 1);
  parts.forEach((p, i) => (offsets[i + 1] = offsets[i]! + p.length));
  return { offsets, bytes: new Uint8Array(Buffer.concat(parts)) };
}
function bytesOf(input: { utf8?: string; hex?: string; affine?: { length: number; mul: number; add: number } }): Uint8Array {
  if (input.utf8 !== undefined) return Buffer.from(input.utf8);
  if (input.hex !== undefined) return Buffer.from(input.hex, 'hex');
  const { length, mul, add } = input.affine!;
  return Uint8Array.from({ length }, (_, i) => (i * mul + add) & 0xff);
}
const plain = (r: object) => JSON.parse(JSON.stringify(r, (_k, v) => (ArrayBuffer.isView(v) ? Array.from(v as Uint8Array) : v)));

describe('loader exports', () => {
  it('describe the outcome as data', () => {
    expect(['native', 'js']).toContain(loader.backend);
    expect(loader.backend === 'native').toBe(loader.binding !== null);
    expect(Array.isArray(loader.loadErrors)).toBe(true);
    expect(loader.platformTriple()).toMatch(/^(linux|darwin|win32|freebsd)-\w+/);
  });
});

const b = loader.binding;
if (!b) {
  if (process.env.CI) it('native build exists in CI', () => expect.fail('run `npm run build -w @cairn/native` first'));
  else console.warn('[binding.test] native build missing: only loader tests ran');
}

describe.runIf(b)('native binding', () => {
  const n = b!;
  it('xxh64 golden vectors: one-shot, hex, streaming', () => {
    for (const v of golden('xxh64.json').vectors) {
      const data = bytesOf(v.input);
      const seed = BigInt(v.seed);
      expect(n.xxh64Hex(data, seed), v.name).toBe(v.hash);
      expect(n.xxh64(data, seed).toString(16).padStart(16, '0')).toBe(v.hash);
      if (v.input.utf8 !== undefined) expect(n.xxh64Hex(v.input.utf8, seed)).toBe(v.hash);
      const state = new Uint8Array(n.xxh64StateBytes);
      n.xxh64Init(state, seed);
      for (let i = 0; i < data.length; i += 45) n.xxh64Update(state, data.subarray(i, i + 45));
      expect(n.xxh64Digest(state).toString(16).padStart(16, '0')).toBe(v.hash);
    }
  });

  it('graph golden vectors', () => {
    const graphs = golden('graphs.json');
    for (const c of graphs.toposort) {
      const g = csr(c.deps);
      expect(plain(n.toposort(g.offsets, g.deps)), c.name).toEqual(c.order ? { ok: true, order: c.order } : { ok: false, cycle: c.cycle });
    }
    for (const c of graphs.expand) {
      const g = csr(c.deps);
      const mark = (idx: number[]) => Uint8Array.from({ length: c.deps.length }, (_, i) => (idx.includes(i) ? 1 : 0));
      const built = mark(c.built);
      const seen = mark(c.seen);
      for (const call of c.calls) {
        const want = call.order ? { ok: true, order: call.order } : { ok: false, cycle: call.cycle };
        expect(plain(n.expand(g.offsets, g.deps, Uint32Array.from(call.roots), built, seen)), c.name).toEqual(want);
      }
      expect(Array.from(seen)).toEqual(Array.from(mark(c.seenAfter)));
    }
  });

  it('fingerprint golden vectors', () => {
    for (const c of golden('fingerprints.json').cases) {
      const g = csr(c.nodes.map((x: { deps: number[] }) => x.deps));
      const names = table(c.nodes.map((x: { name: string }) => x.name));
      const attrs = table(c.nodes.map((x: { attrs: string }) => x.attrs));
      const r = n.fingerprintAll(g.offsets, g.deps, names.offsets, names.bytes, attrs.offsets, attrs.bytes);
      if (c.hashes) expect(r.ok && Buffer.from(r.hex).toString(), c.name).toBe(c.hashes.join(''));
      else expect(plain(r), c.name).toEqual({ ok: false, cycle: c.cycle });
    }
  });

  it('lowered-step golden vectors: xxh64HexMany, then loweredIdentities', () => {
    for (const c of golden('lowered.json').cases) {
      type Node = { name: string; version: string; payload: string; deps: number[]; expected?: string };
      const nodes: Node[] = c.nodes;
      const g = csr(nodes.map((x) => x.deps));
      const names = table(nodes.map((x) => x.name));
      const versionList = [...new Set(nodes.map((x) => x.version))];
      const versions = table(versionList);
      const versionOf = Uint32Array.from(nodes, (x) => versionList.indexOf(x.version));
      const payloads = table(nodes.map((x) => x.payload));
      const extras = table(nodes.map((x) => (x.expected === undefined ? '' : `,"expectedFingerprint":${JSON.stringify(x.expected)}`)));
      const fingerprints = new Uint8Array(16 * nodes.length);
      n.xxh64HexMany(payloads.offsets, payloads.bytes, fingerprints, 0);
      expect(Buffer.from(fingerprints).toString(), c.name).toBe(c.fingerprints.join(''));
      const hashes = n.loweredIdentities(g.offsets, g.deps, names.offsets, names.bytes, versionOf, versions.offsets, versions.bytes, fingerprints, extras.offsets, extras.bytes);
      expect(Buffer.from(hashes).toString(), c.name).toBe(c.hashes.join(''));
      // Into the caller's array, with the first half known in that same array (a lowering session's call).
      const half = 16 * Math.floor(nodes.length / 2);
      const inOut = new Uint8Array(16 * nodes.length);
      inOut.set(hashes.subarray(0, half));
      const got = n.loweredIdentities(g.offsets, g.deps, names.offsets, names.bytes, versionOf, versions.offsets, versions.bytes, fingerprints, extras.offsets, extras.bytes, inOut, inOut);
      expect(got, c.name).toBe(inOut);
      expect(Buffer.from(inOut).toString(), c.name).toBe(c.hashes.join(''));
      expect(n.duplicateSteps(names.offsets, names.bytes, versionOf).length, c.name).toBe(0);
    }
  });

  it('bad input throws CAIRN_NATIVE_BAD_INPUT naming the argument', () => {
    const cases: [() => unknown, RegExp][] = [
      [() => n.toposort(new Uint32Array(), new Uint32Array()), /^offsets must have/],
      [() => n.toposort([0] as unknown as Uint32Array, new Uint32Array()), /^offsets must be a Uint32Array/],
      [() => n.toposort(Uint32Array.of(0), new Uint8Array() as unknown as Uint32Array), /^deps must be a Uint32Array/],
      [() => n.toposort(Uint32Array.of(0, 3, 1), Uint32Array.of(0)), /monotone/],
      [() => n.expand(Uint32Array.of(0, 0), new Uint32Array(), Uint32Array.of(1), new Uint8Array(1), new Uint8Array(1)), /^roots\[0\]/],
      [() => n.fingerprintAll(Uint32Array.of(0, 0), new Uint32Array(), Uint32Array.of(0), new Uint8Array(), Uint32Array.of(0, 0), new Uint8Array()), /^nameOffsets/],
      [() => n.xxh64(123 as unknown as string), /^data must be a Uint8Array/],
      [() => n.xxh64('x', 1 as unknown as bigint), /^seed must be a bigint/],
      [() => n.readFiles('/tmp', 5 as unknown as string), /^names must be a Uint8Array/],
      [() => n.xxh64Digest(new Uint8Array(4)), /^state must have/],
      [() => n.xxh64HexMany(Uint32Array.of(0, 1), Uint8Array.of(1), new Uint8Array(8), 0), /^out has 8 bytes/],
      [() => n.xxh64HexMany(Uint32Array.of(0), new Uint8Array(), new Uint8Array(8), -1), /^at must be a non-negative integer/],
      [() => n.duplicateSteps(Uint32Array.of(0, 0), new Uint8Array(), new Uint32Array()), /^versionOf must have n = 1/],
      [
        () => n.loweredIdentities(Uint32Array.of(0, 1), Uint32Array.of(0), Uint32Array.of(0, 0), new Uint8Array(), Uint32Array.of(0), Uint32Array.of(0, 0), new Uint8Array(), new Uint8Array(16), Uint32Array.of(0, 0), new Uint8Array()),
        /dependencies first/,
      ],
      [
        () => n.loweredIdentities(Uint32Array.of(0, 0), new Uint32Array(), Uint32Array.of(0, 0), new Uint8Array(), Uint32Array.of(0), Uint32Array.of(0, 0), new Uint8Array(), new Uint8Array(16), Uint32Array.of(0, 0), new Uint8Array(), undefined, new Uint8Array(8)),
        /^out must have 16 \* n = 16 bytes/,
      ],
      [
        () => {
          const fp = new Uint8Array(16);
          return n.loweredIdentities(Uint32Array.of(0, 0), new Uint32Array(), Uint32Array.of(0, 0), new Uint8Array(), Uint32Array.of(0), Uint32Array.of(0, 0), new Uint8Array(), fp, Uint32Array.of(0, 0), new Uint8Array(), undefined, fp);
        },
        /^out must not share memory/,
      ],
    ];
    for (const [f, msg] of cases) expect(f).toThrow(expect.objectContaining({ code: 'CAIRN_NATIVE_BAD_INPUT', message: expect.stringMatching(msg) }));
  });

  it('reads typed-array views at an offset in place', () => {
    const buf = new Uint32Array([99, 0, 0, 1, 0]);
    const r = n.toposort(buf.subarray(1, 4), buf.subarray(4, 5));
    expect(plain(r)).toEqual({ ok: true, order: [0, 1] });
    const bytes = Buffer.from('xxabcxx');
    expect(n.xxh64Hex(bytes.subarray(2, 5))).toBe('44bc2cf5ad770999');
  });

  it('readFiles: contents in order, errors as errno + phase, names relative to a base or absolute', async () => {
    const d = mkdtempSync(join(tmpdir(), 'cairn-native-read-'));
    try {
      writeFileSync(join(d, 'a'), 'SUCCESS');
      writeFileSync(join(d, 'ü'), 'é✓');
      writeFileSync(join(d, 'empty'), '');
      mkdirSync(join(d, 'dir'));
      const names = ['a', 'missing', 'ü', 'empty', 'a/below-a-file', 'dir'];
      const expected = { text: ['SUCCESS', '', 'é✓', '', '', ''], errors: [0, 65536 + 2, 0, 0, 65536 + 20, 131072 + 21] };
      const texts = (r: { bytes: Uint8Array; ends: Uint32Array; errors: Uint32Array }) =>
        Array.from(r.ends, (end, i) => Buffer.from(r.bytes.buffer, r.bytes.byteOffset, r.bytes.byteLength).toString('utf8', i === 0 ? 0 : r.ends[i - 1], end));
      for (const r of [await n.readFiles(d, names.join('\0')), await n.readFiles('', names.map((x) => join(d, x)).join('\0'))]) {
        expect({ text: texts(r), errors: Array.from(r.errors) }).toEqual(expected);
      }
      const none = await n.readFiles(d, '');
      expect([none.bytes.length, none.ends.length, none.errors.length]).toEqual([0, 0, 0]);
      // noLinks: a name that is a link is not read (ELOOP at open), and the batch says links were checked.
      symlinkSync(join(d, 'dir'), join(d, 'link'));
      writeFileSync(join(d, 'dir', 'f'), 'in dir');
      for (const base of [d, '']) {
        const at = (x: string) => (base === '' ? join(d, x) : x);
        const r = await n.readFiles(base, [at('dir'), at('link')].join('\0'), '/f', true);
        expect({ errors: Array.from(r.errors), checked: r.linksChecked }).toEqual({ errors: [0, 65536 + constants.errno.ELOOP], checked: true });
        const followed = await n.readFiles(base, [at('dir'), at('link')].join('\0'), '/f');
        expect({ errors: Array.from(followed.errors), checked: followed.linksChecked }).toEqual({ errors: [0, 0], checked: false });
      }
      // then: a second file per name, read only where the first holds exactly the token.
      writeFileSync(join(d, 'dir', 'g'), 'second');
      const pair = await n.readFiles(d, ['dir', 'link', 'missing'].join('\0'), '/f', true, 'in dir', '/g');
      expect({ text: texts(pair), errors: Array.from(pair.errors) }).toEqual({
        text: ['in dir', 'second', '', '', '', ''],
        errors: [0, 0, 65536 + constants.errno.ELOOP, 0xfffffffe, 65536 + 2, 0xfffffffe],
      });
      const otherToken = await n.readFiles(d, 'dir', '/f', true, 'in di', '/g');
      expect(Array.from(otherToken.errors)).toEqual([0, 0xfffffffe]);
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});
