// Hashing n short strings shaped like identity texts (~110 bytes), one call per string:
// Cairn's backend XXH64 (native or fallback) next to node:crypto sha256 and xxhash-wasm.
import * as crypto from 'node:crypto';
import { createRequire } from 'node:module';
import { check, timeSync } from '../lib/timing.mjs';

const require = createRequire(import.meta.url);

function inputs(n) {
  const out = new Array(n);
  for (let i = 0; i < n; i++) {
    out[i] = `{"deps":["n${i >> 1}-${(i * 2654435761 >>> 0).toString(16).padStart(16, '0')}"],"hashAttrs":{"i":${i},"tag":"bench"},"name":"n${i}"}`;
  }
  return out;
}

function measure(n, hash) {
  const xs = inputs(n);
  return () => {
    const { ms, value } = timeSync(() => {
      let last = '';
      for (let i = 0; i < n; i++) last = hash(xs[i]);
      return last;
    });
    check(typeof value === 'string' && value.length >= 16, 'hash returned hex');
    return ms;
  };
}

export const variants = {
  /** `getBackend().xxh64Hex(string)`. */
  async cairn({ n }) {
    const core = await import('@cairn/core');
    const b = core.getBackend();
    return measure(n, (s) => b.xxh64Hex(s));
  },
  /** `crypto.hash('sha256', s)` where available (Node ≥ 20.12), else `createHash`. */
  async 'node:crypto sha256'({ n }) {
    const hash = typeof crypto.hash === 'function' ? (s) => crypto.hash('sha256', s) : (s) => crypto.createHash('sha256').update(s).digest('hex');
    return measure(n, hash);
  },
  /** xxhash-wasm 1.1 `h64ToString`. */
  async 'xxhash-wasm'({ n }) {
    const xxhash = require('xxhash-wasm');
    const { h64ToString } = await xxhash();
    return measure(n, h64ToString);
  },
};
