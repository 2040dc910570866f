// Scratch directories for the disk cases: one per repetition, removed untimed.
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh directory under `$CAIRN_BENCH_TMP` (default the OS temp dir) and its remover. */
export function scratch(label) {
  const base = process.env.CAIRN_BENCH_TMP ?? tmpdir();
  const dir = fs.mkdtempSync(join(base, `cairn-bench-${label}-`));
  return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}
