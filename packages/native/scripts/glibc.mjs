// Which glibc symbol versions a built module needs, read with `objdump -T` (binutils).
// Used by test/glibc.test.ts and by scripts/stage.mjs before a release.
import { spawnSync } from 'node:child_process';

/** The glibc floor the Linux gnu builds promise (README.md, "Platforms"). */
export const GLIBC_FLOOR = '2.17';

const parts = (v) => v.split('.').map(Number);
/** Compares dotted versions numerically. */
export function compareVersions(a, b) {
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * The undefined symbols of `file` that carry a GLIBC version, as `{ symbol, version }`, or
 * `null` when objdump is not installed. Weak references count: their version is still recorded
 * as required, and the loader refuses a module whose required version is missing.
 */
export function glibcNeeds(file) {
  const r = spawnSync('objdump', ['-T', file], { encoding: 'utf8' });
  if (r.error) return null;
  if (r.status !== 0) throw new Error(`objdump -T ${file} failed: ${r.stderr.trim()}`);
  const needs = [];
  for (const line of r.stdout.split('\n')) {
    const m = /\*UND\*\s+\S+\s+\(?GLIBC_([\d.]+)\)?\s+(\S+)/.exec(line);
    if (m) needs.push({ symbol: m[2], version: m[1] });
  }
  return needs;
}

/** The symbols of `file` that need a glibc newer than `floor` (empty when it loads there). */
export function aboveFloor(file, floor = GLIBC_FLOOR) {
  const needs = glibcNeeds(file);
  return needs === null ? null : needs.filter((n) => compareVersions(n.version, floor) > 0);
}
