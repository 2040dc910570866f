/** JSON string escaping on UTF-8 bytes, as `JSON.stringify` escapes: only `"`, `\` and bytes below 0x20 change. */

const QUOTE = 0x22, BACKSLASH = 0x5c;
const HEX = new Uint8Array([48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 97, 98, 99, 100, 101, 102]);
/** JSON short escapes for bytes below 0x20 (0 = use \u00xx). */
const SHORT = new Uint8Array(32);
SHORT[0x08] = 0x62; SHORT[0x09] = 0x74; SHORT[0x0a] = 0x6e; SHORT[0x0c] = 0x66; SHORT[0x0d] = 0x72;

/**
 * Writes `src[a, b)` JSON-escaped, without quotes, into `dst` from `at` and returns where it
 * ended. The caller makes room for the worst case, 6 × (b − a) bytes.
 */
export function escapeJsonBytes(dst: Uint8Array, at: number, src: Uint8Array, a: number, b: number): number {
  let p = at;
  for (let k = a; k < b; k++) {
    const c = src[k]!;
    if (c === QUOTE || c === BACKSLASH) {
      dst[p++] = BACKSLASH;
      dst[p++] = c;
    } else if (c < 0x20) {
      dst[p++] = BACKSLASH;
      if (SHORT[c]) dst[p++] = SHORT[c]!;
      else {
        dst[p++] = 0x75; dst[p++] = 0x30; dst[p++] = 0x30;
        dst[p++] = HEX[c >> 4]!; dst[p++] = HEX[c & 0xf]!;
      }
    } else dst[p++] = c;
  }
  return p;
}
