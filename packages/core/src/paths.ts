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
  let p = prefix;
  const schemeEnd = hasScheme(p) ? p.indexOf('://') + 3 : 0;
  while (p.length > schemeEnd && p.endsWith('/')) p = p.slice(0, -1);
  let r = rel;
  while (r.startsWith('/')) r = r.slice(1);
  if (r === '') return p;
  if (p.length === schemeEnd) return p + r;
  return `${p}/${r}`;
}
