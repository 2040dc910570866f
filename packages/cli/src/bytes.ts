/**
 * Byte sizes as people read them (`512 KiB`, `3.2 MiB`, `1.1 GiB`): one rule for the terminal
 * (`cairn status`, `cairn report`) and the `cairn ui` page, which bundles this file. Pure, no
 * imports, so the page can take it as it is.
 */

/** `512 KiB`, `3.2 MiB`; `-` for a value that is not a size. */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n) || n < 0) return '-';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v : v < 10 ? v.toFixed(1) : Math.round(v)} ${units[u]}`;
}
