import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import xxhashWasm from 'xxhash-wasm';
import { beforeAll, describe, expect, it } from 'vitest';
import { jsBackend, nativeBackend } from '../src/backend.js';
import { PureXxh64, createXxh64, hex64, xxh64, xxh64Engine, xxh64Hex, xxh64HexInto, xxh64Pure, xxh64Ready } from '../src/hash/xxh64.js';

interface Vector {
  name: string;
  input: { utf8: string } | { hex: string } | { affine: { length: number; mul: number; add: number } };
  seed: string;
  hash: string;
}
const vectors: Vector[] = JSON.parse(readFileSync(new URL('../../../fixtures/golden/xxh64.json', import.meta.url), 'utf8')).vectors;

function bytesOf(input: Vector['input']): Uint8Array {
  if ('utf8' in input) return new TextEncoder().encode(input.utf8);
  if ('hex' in input) return Uint8Array.from(Buffer.from(input.hex, 'hex'));
  const { length, mul, add } = input.affine;
  const b = new Uint8Array(length);
  for (let i = 0; i < length; i++) b[i] = (i * mul + add) & 0xff;
  return b;
}

/** Feeds `data` in chunks of the given sizes, cycling. */
function chunked(stream: { update(d: Uint8Array): unknown }, data: Uint8Array, sizes: number[]): void {
  let i = 0;
  for (let k = 0; i < data.length; k++) {
    const n = sizes[k % sizes.length]!;
    stream.update(data.subarray(i, i + n));
    i += n;
  }
}

describe('golden XXH64 vectors', () => {
  it('has the required coverage', () => {
    const lengths = new Set(vectors.map((v) => bytesOf(v.input).length));
    for (let n = 0; n <= 64; n++) expect(lengths.has(n)).toBe(true);
    expect(lengths.has(1 << 20)).toBe(true);
    expect(vectors.some((v) => v.seed !== '0')).toBe(true);
    expect(vectors.some((v) => 'utf8' in v.input && /[^\x00-\x7f]/.test(v.input.utf8))).toBe(true);
  });

  it('match the pure TypeScript implementation, one-shot and streaming', () => {
    for (const v of vectors) {
      const data = bytesOf(v.input);
      const seed = BigInt(v.seed);
      expect(hex64(xxh64Pure(data, seed)), v.name).toBe(v.hash);
      for (const sizes of [[1], [7, 1, 32], [31, 33], [64]]) {
        const s = new PureXxh64(seed);
        chunked(s, data, sizes);
        expect(hex64(s.digest()), `${v.name} ${sizes}`).toBe(v.hash);
      }
      if ('utf8' in v.input) expect(hex64(xxh64Pure(v.input.utf8, seed))).toBe(v.hash);
      if (seed === 0n && data.length < 4096) {
        const out = new Uint8Array(20);
        xxh64HexInto(data, data.length, out, 2);
        expect(Buffer.from(out.subarray(2, 18)).toString()).toBe(v.hash);
      }
    }
  });

  it('match xxhash-wasm and the wasm-backed entry points once ready', async () => {
    await xxh64Ready;
    expect(xxh64Engine()).toBe('wasm');
    const ref = await xxhashWasm();
    for (const v of vectors) {
      const data = bytesOf(v.input);
      const seed = BigInt(v.seed);
      expect(hex64(ref.h64Raw(data, seed)), v.name).toBe(v.hash);
      expect(hex64(xxh64(data, seed))).toBe(v.hash);
      if (seed === 0n) expect(xxh64Hex(data)).toBe(v.hash);
      const s = createXxh64(seed);
      chunked(s, data, [13, 50]);
      expect(hex64(s.digest())).toBe(v.hash);
    }
  });

  const backends = [jsBackend, ...(nativeBackend ? [nativeBackend] : [])];
  describe.each(backends.map((b) => [b.kind, b] as const))('through the %s backend', (_kind, b) => {
    beforeAll(() => xxh64Ready);
    it('one-shot, hex and streaming', () => {
      for (const v of vectors) {
        const data = bytesOf(v.input);
        const seed = BigInt(v.seed);
        expect(hex64(b.xxh64(data, seed)), v.name).toBe(v.hash);
        if ('utf8' in v.input) expect(hex64(b.xxh64(v.input.utf8, seed))).toBe(v.hash);
        if (seed === 0n) expect(b.xxh64Hex(data)).toBe(v.hash);
        const s = b.createXxh64(seed);
        chunked(s, data, [3, 29, 64, 1]);
        expect(hex64(s.digest()), `${v.name} streaming`).toBe(v.hash);
      }
    });
    it('digest does not consume the stream; strings stream as UTF-8', () => {
      const s = b.createXxh64(5n).update('héllo ');
      const first = s.digest();
      expect(s.digest()).toBe(first);
      s.update('wörld 😀');
      expect(s.digest()).toBe(xxh64Pure('héllo wörld 😀', 5n));
    });
    it('reduces seeds mod 2^64', () => {
      expect(b.xxh64('abc', -1n)).toBe(xxh64Pure('abc', (1n << 64n) - 1n));
      expect(b.xxh64('abc', 1n << 64n)).toBe(xxh64Pure('abc', 0n));
    });
    it('refuses data that is not bytes or a string', () => {
      expect(() => b.xxh64(42 as unknown as string)).toThrow(expect.objectContaining({ code: 'CAIRN_GRAPH_INPUT' }));
    });
  });
});

describe('pure TypeScript XXH64 against xxhash-wasm (property)', () => {
  it('agrees on random bytes, seeds and chunkings', async () => {
    const ref = await xxhashWasm();
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 300 }),
        fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
        fc.array(fc.integer({ min: 1, max: 70 }), { minLength: 1, maxLength: 5 }),
        (data, seed, sizes) => {
          const want = ref.h64Raw(data, seed);
          expect(xxh64Pure(data, seed)).toBe(want);
          const s = new PureXxh64(seed);
          chunked(s, data, sizes);
          expect(s.digest()).toBe(want);
        },
      ),
      { numRuns: 500 },
    );
  });
  it('agrees on random strings, including astral characters', async () => {
    const ref = await xxhashWasm();
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 80 }), (s) => {
        expect(xxh64Pure(s)).toBe(ref.h64(s));
      }),
      { numRuns: 300 },
    );
  });
});
