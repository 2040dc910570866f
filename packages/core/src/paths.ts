/** True for `gs://…`, `s3://…`, `file://…` and other URLs. */
export function hasScheme(p: string): boolean {
  return /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(p);
}

/** True for an absolute filesystem path or a URL: used as-is, never joined to a prefix. */
export function isAbsoluteLocation(p: string): boolean {
  return p.startsWith('/') || hasScheme(p);
}

/**
 * Joins a prefix and a relative path with exactly one `/` (Marin #6904: a trailing
 * slash on the prefix must not produce `//`).
 */
export function joinPath(prefix: string, rel: string): string {
  let r = rel;
  while (r.startsWith('/')) r = r.slice(1);
  if (r === '') return prefixBase(prefix, false);
  return prefixBase(prefix, true) + r;
}

/** The last prefix {@link prefixBase} normalised, and the result (a run joins one prefix to every step's path). */
let lastPrefix: string | undefined;
let lastBase = '';
let lastBare = '';

/**
 * @internal `prefix` without its trailing slashes (`withSlash` false), or as it goes before a relative
 * path: with exactly one `/` after it, none after a bare URL root such as `s3://`.
 */
export function prefixBase(prefix: string, withSlash: boolean): string {
  if (prefix !== lastPrefix) {
    let p = prefix;
    const schemeEnd = hasScheme(p) ? p.indexOf('://') + 3 : 0;
    while (p.length > schemeEnd && p.endsWith('/')) p = p.slice(0, -1);
    lastBare = p;
    lastBase = p.length === schemeEnd ? p : `${p}/`;
    lastPrefix = prefix;
  }
  return withSlash ? lastBase : lastBare;
}

/** Where {@link flatStepPath} assembles a path's bytes (grown when a path is longer). */
let pathBytes = Buffer.allocUnsafe(512);
const latin1Slice = Buffer.prototype.latin1Slice;

/**
 * @internal `${base}${name}-${hex}` as one flat string, where `hex` is the 16 bytes of `digests`
 * at `16 * i`; undefined when `base` or `name` has a character above U+00FF (the caller then
 * concatenates). A run makes every step's path once and hashes it several times: a
 * concatenation is a tree of strings that V8 copies into a flat one on the first hash and
 * keeps both; this builds the flat string directly.
 */
export function flatStepPath(base: string, name: string, digests: Uint8Array, i: number): string | undefined {
  const nb = base.length;
  const nn = name.length;
  const n = nb + nn + 17;
  if (n > pathBytes.length) pathBytes = Buffer.allocUnsafe(2 * n);
  const b = pathBytes;
  let p = 0;
  for (let k = 0; k < nb; k++) {
    const c = base.charCodeAt(k);
    if (c > 0xff) return undefined;
    b[p++] = c;
  }
  for (let k = 0; k < nn; k++) {
    const c = name.charCodeAt(k);
    if (c > 0xff) return undefined;
    b[p++] = c;
  }
  b[p++] = 0x2d; // '-'
  for (let k = 16 * i, end = k + 16; k < end; k++) b[p++] = digests[k] as number;
  return latin1Slice.call(b, 0, p) as string;
}
