import xxhashWasm from 'xxhash-wasm';

/**
 * XXH64 for the TypeScript backend.
 *
 * A synchronous pure-TypeScript implementation (64-bit arithmetic on 32-bit halves) answers
 * from the first call; `xxhash-wasm` is instantiated at import and takes over once ready.
 * Both agree bit-for-bit with each other and with the Rust module (fixtures/golden/xxh64.json).
 */

/** A streaming XXH64 hasher. */
export interface Xxh64Hasher {
  /** Feed more bytes (a string is fed as UTF-8). Returns `this`. */
  update(data: Uint8Array | string): Xxh64Hasher;
  /** The digest of everything fed so far. The hasher stays usable. */
  digest(): bigint;
}

interface WasmApi {
  h64(input: string, seed?: bigint): bigint;
  h64Raw(input: Uint8Array, seed?: bigint): bigint;
  create64(seed?: bigint): Xxh64Hasher;
}

let wasm: WasmApi | undefined;

/** Resolves once `xxhash-wasm` is instantiated (never rejects; on failure the TS code stays in use). */
export const xxh64Ready: Promise<void> = xxhashWasm().then(
  (api) => {
    wasm = api;
  },
  () => undefined,
);

/** Which engine answers {@link xxh64} right now. */
export function xxh64Engine(): 'wasm' | 'ts' {
  return wasm ? 'wasm' : 'ts';
}

const encoder = new TextEncoder();
const MASK64 = (1n << 64n) - 1n;

// ---- 64-bit arithmetic on (hi, lo) 32-bit halves; results land in RH/RL --------------------
// Halves are kept as int32 (`| 0`), not uint32: V8 stores int32 in module slots without boxing.

let RH = 0;
let RL = 0;

const P1H = 0x9e3779b1, P1L = 0x85ebca87;
const P2H = 0xc2b2ae3d, P2L = 0x27d4eb4f;
const P3H = 0x165667b1, P3L = 0x9e3779f9;
const P4H = 0x85ebca77, P4L = 0xc2b2ae63;
const P5H = 0x27d4eb2f, P5L = 0x165667c5;

/** Low 64 bits of a * b. */
function mul(ah: number, al: number, bh: number, bl: number): void {
  const a0 = al & 0xffff, a1 = al >>> 16, b0 = bl & 0xffff, b1 = bl >>> 16;
  let t = a0 * b0;
  const w0 = t & 0xffff;
  t = a1 * b0 + (t >>> 16);
  const w1 = t & 0xffff;
  const w2 = t >>> 16;
  t = a0 * b1 + w1;
  // high half of al*bl, plus the cross terms that land in the high word
  const hi = a1 * b1 + w2 + (t >>> 16) + Math.imul(al, bh) + Math.imul(ah, bl);
  RL = (t << 16) | w0;
  RH = hi | 0;
}

function add(ah: number, al: number, bh: number, bl: number): void {
  const lo = (al >>> 0) + (bl >>> 0);
  RL = lo | 0;
  RH = (ah + bh + (lo > 0xffffffff ? 1 : 0)) | 0;
}

/** Rotate left by 0 < r < 32. */
function rotl(h: number, l: number, r: number): void {
  RH = (h << r) | (l >>> (32 - r));
  RL = (l << r) | (h >>> (32 - r));
}

/** acc = rotl(acc + input * P2, 31) * P1 */
function round(ah: number, al: number, ih: number, il: number): void {
  mul(ih, il, P2H, P2L);
  add(ah, al, RH, RL);
  rotl(RH, RL, 31);
  mul(RH, RL, P1H, P1L);
}

function u32(b: Uint8Array, i: number): number {
  return b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24);
}

/** Folds whole 32-byte stripes of `b[start, end)` into `lanes` (4 × [hi, lo]). */
function stripes(lanes: Uint32Array, b: Uint8Array, start: number, end: number): void {
  let v1h = lanes[0]!, v1l = lanes[1]!, v2h = lanes[2]!, v2l = lanes[3]!;
  let v3h = lanes[4]!, v3l = lanes[5]!, v4h = lanes[6]!, v4l = lanes[7]!;
  for (let i = start; i + 32 <= end; i += 32) {
    round(v1h, v1l, u32(b, i + 4), u32(b, i));
    v1h = RH; v1l = RL;
    round(v2h, v2l, u32(b, i + 12), u32(b, i + 8));
    v2h = RH; v2l = RL;
    round(v3h, v3l, u32(b, i + 20), u32(b, i + 16));
    v3h = RH; v3l = RL;
    round(v4h, v4l, u32(b, i + 28), u32(b, i + 24));
    v4h = RH; v4l = RL;
  }
  lanes[0] = v1h; lanes[1] = v1l; lanes[2] = v2h; lanes[3] = v2l;
  lanes[4] = v3h; lanes[5] = v3l; lanes[6] = v4h; lanes[7] = v4l;
}

function initLanes(lanes: Uint32Array, sh: number, sl: number): void {
  add(sh, sl, P1H, P1L);
  add(RH, RL, P2H, P2L);
  lanes[0] = RH; lanes[1] = RL;
  add(sh, sl, P2H, P2L);
  lanes[2] = RH; lanes[3] = RL;
  lanes[4] = sh; lanes[5] = sl;
  // seed - P1 = seed + (2^64 - P1)
  add(sh, sl, 0x61c8864e, 0x7a143579);
  lanes[6] = RH; lanes[7] = RL;
}

/** Sets RH/RL to the converged accumulator of four lanes. */
function converge(lanes: Uint32Array): void {
  rotl(lanes[0]!, lanes[1]!, 1);
  let h = RH, l = RL;
  for (const [k, r] of [[2, 7], [4, 12], [6, 18]] as const) {
    rotl(lanes[k]!, lanes[k + 1]!, r);
    add(h, l, RH, RL);
    h = RH; l = RL;
  }
  for (let k = 0; k < 8; k += 2) {
    round(0, 0, lanes[k]!, lanes[k + 1]!);
    h ^= RH; l ^= RL;
    mul(h, l, P1H, P1L);
    add(RH, RL, P4H, P4L);
    h = RH; l = RL;
  }
  RH = h | 0;
  RL = l | 0;
}

/** Adds `total`, mixes the tail `b[start, end)` (< 32 bytes) into (h, l) and avalanches into RH/RL. */
function finish(h: number, l: number, total: number, b: Uint8Array, start: number, end: number): void {
  add(h, l, Math.floor(total / 0x100000000) | 0, total | 0);
  h = RH; l = RL;
  let i = start;
  for (; i + 8 <= end; i += 8) {
    round(0, 0, u32(b, i + 4), u32(b, i));
    rotl(h ^ RH, l ^ RL, 27);
    mul(RH, RL, P1H, P1L);
    add(RH, RL, P4H, P4L);
    h = RH; l = RL;
  }
  if (i + 4 <= end) {
    mul(0, u32(b, i), P1H, P1L);
    rotl(h ^ RH, l ^ RL, 23);
    mul(RH, RL, P2H, P2L);
    add(RH, RL, P3H, P3L);
    h = RH; l = RL;
    i += 4;
  }
  for (; i < end; i++) {
    mul(0, b[i]!, P5H, P5L);
    rotl(h ^ RH, l ^ RL, 11);
    mul(RH, RL, P1H, P1L);
    h = RH; l = RL;
  }
  // avalanche
  l ^= h >>> 1; // h ^= h >> 33
  mul(h, l, P2H, P2L);
  h = RH; l = RL;
  l ^= (l >>> 29) | (h << 3); // h ^= h >> 29
  h ^= h >>> 29;
  mul(h, l, P3H, P3L);
  RL ^= RH; // h ^= h >> 32
}

const scratchLanes = new Uint32Array(8);

/** Pure-TS one-shot XXH64 of `b[0, end)`; the result lands in RH/RL. */
function hashInto(b: Uint8Array, end: number, sh: number, sl: number): void {
  let h: number, l: number;
  let i = 0;
  if (end >= 32) {
    initLanes(scratchLanes, sh, sl);
    stripes(scratchLanes, b, 0, end);
    i = end - (end % 32);
    converge(scratchLanes);
    h = RH; l = RL;
  } else {
    add(sh, sl, P5H, P5L);
    h = RH; l = RL;
  }
  finish(h, l, end, b, i, end);
}

function seedHalves(seed: bigint): [number, number] {
  const s = BigInt.asUintN(64, seed);
  return [Number(s >> 32n), Number(s & 0xffffffffn)];
}

const toBigInt = (h: number, l: number): bigint => (BigInt(h >>> 0) << 32n) | BigInt(l >>> 0);

const HEX = '0123456789abcdef';
const hex8 = (x: number): string => {
  let s = '';
  for (let k = 28; k >= 0; k -= 4) s += HEX[(x >>> k) & 0xf];
  return s;
};

/** Pure-TS XXH64 (never uses wasm). @default seed 0n */
export function xxh64Pure(data: Uint8Array | string, seed = 0n): bigint {
  const b = typeof data === 'string' ? encoder.encode(data) : data;
  const [sh, sl] = seedHalves(seed);
  hashInto(b, b.length, sh, sl);
  return toBigInt(RH, RL);
}

const HEX_CODES = new Uint8Array([48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 97, 98, 99, 100, 101, 102]);

/**
 * Seed-0 XXH64 of `data[0, end)` written as 16 ASCII hex digits into `out` at `at`:
 * the inner loop of the TypeScript `fingerprintAll`. wasm once ready (about 7x faster on
 * short inputs), else pure TS.
 */
export function xxh64HexInto(data: Uint8Array, end: number, out: Uint8Array, at: number): void {
  let h: number, l: number;
  if (wasm) {
    const x = wasm.h64Raw(end === data.length ? data : data.subarray(0, end));
    h = Number(x >> 32n);
    l = Number(x & 0xffffffffn);
  } else {
    hashInto(data, end, 0, 0);
    h = RH;
    l = RL;
  }
  for (let k = 0; k < 8; k++) {
    out[at + k] = HEX_CODES[(h >>> (28 - 4 * k)) & 0xf]!;
    out[at + 8 + k] = HEX_CODES[(l >>> (28 - 4 * k)) & 0xf]!;
  }
}

/** XXH64 of `data` (a string is hashed as UTF-8). @default seed 0n */
export function xxh64(data: Uint8Array | string, seed = 0n): bigint {
  if (wasm) return typeof data === 'string' ? wasm.h64(data, BigInt.asUintN(64, seed)) : wasm.h64Raw(data, BigInt.asUintN(64, seed));
  return xxh64Pure(data, seed);
}

/** XXH64 as 16 lowercase hex digits. @default seed 0n */
export function xxh64Hex(data: Uint8Array | string, seed = 0n): string {
  if (wasm) return xxh64(data, seed).toString(16).padStart(16, '0');
  const b = typeof data === 'string' ? encoder.encode(data) : data;
  const [sh, sl] = seedHalves(seed);
  hashInto(b, b.length, sh, sl);
  return hex8(RH) + hex8(RL);
}

/** A pure-TS streaming XXH64 hasher. */
export class PureXxh64 implements Xxh64Hasher {
  private readonly sh: number;
  private readonly sl: number;
  private readonly lanes = new Uint32Array(8);
  private readonly mem = new Uint8Array(32);
  private memLen = 0;
  private total = 0;

  /** @default seed 0n */
  constructor(seed = 0n) {
    [this.sh, this.sl] = seedHalves(seed);
    initLanes(this.lanes, this.sh, this.sl);
  }

  /** Feed more bytes (a string is fed as UTF-8). Returns `this`. */
  update(data: Uint8Array | string): this {
    const b = typeof data === 'string' ? encoder.encode(data) : data;
    const n = b.length;
    this.total += n;
    let i = 0;
    if (this.memLen + n < 32) {
      this.mem.set(b, this.memLen);
      this.memLen += n;
      return this;
    }
    if (this.memLen > 0) {
      i = 32 - this.memLen;
      this.mem.set(b.subarray(0, i), this.memLen);
      stripes(this.lanes, this.mem, 0, 32);
      this.memLen = 0;
    }
    const whole = i + Math.floor((n - i) / 32) * 32;
    stripes(this.lanes, b, i, whole);
    this.mem.set(b.subarray(whole, n), 0);
    this.memLen = n - whole;
    return this;
  }

  /** The digest of everything fed so far. The hasher stays usable. */
  digest(): bigint {
    if (this.total >= 32) converge(this.lanes);
    else add(this.sh, this.sl, P5H, P5L);
    finish(RH, RL, this.total, this.mem, 0, this.memLen);
    return toBigInt(RH, RL);
  }
}

/** A streaming XXH64 hasher: xxhash-wasm's once it is ready, else the pure-TS one. @default seed 0n */
export function createXxh64(seed = 0n): Xxh64Hasher {
  return wasm ? wasm.create64(BigInt.asUintN(64, seed)) : new PureXxh64(seed);
}

/** `h` as 16 lowercase hex digits. */
export function hex64(h: bigint): string {
  return (h & MASK64).toString(16).padStart(16, '0');
}
