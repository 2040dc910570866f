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
