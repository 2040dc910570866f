/**
 * A step's checkpoint directory as the CLI sees it (filesystem stores): its current generation
 * (`gen-N`, runner README "Commits and leases") and how much it holds. `cairn status` shows it;
 * `cairn clean` removes it with the step's output unless told to keep it.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { localLayout } from '@cairn/runner';

/** What a step's checkpoint directory holds. */
export interface CheckpointSummary {
  /** The directory of all its generations (what `cairn clean` removes). */
  readonly root: string;
  /** The current generation (the highest `gen-N`); 0 when none is complete yet. */
  readonly generation: number;
  /** Files in the current generation, recursively. */
  readonly files: number;
  /** Their total size in bytes. */
  readonly bytes: number;
}

const GENERATION = /^gen-(\d+)$/;

/** The checkpoint directory beside the output at `path`; null when it has none. */
export async function readCheckpoints(path: string): Promise<CheckpointSummary | null> {
  const root = localLayout.checkpointRoot(path);
  let names: string[];
  try {
    names = await readdir(root);
  } catch {
    return null;
  }
  let generation = 0;
  for (const n of names) {
    const m = GENERATION.exec(n);
    if (m !== null) generation = Math.max(generation, Number(m[1]));
  }
  let files = 0;
  let bytes = 0;
  if (generation > 0) {
    const dir = join(root, `gen-${generation}`);
    for (const e of await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => [])) {
      if (!e.isFile()) continue;
      files++;
      bytes += (await stat(join(e.parentPath, e.name)).catch(() => ({ size: 0 }))).size;
    }
  }
  return { root, generation, files, bytes };
}

/** `gen 3: 5 files, 1.2 MB`. */
export function describeCheckpoints(c: CheckpointSummary): string {
  return `gen ${c.generation}: ${c.files} file${c.files === 1 ? '' : 's'}, ${formatBytes(c.bytes)}`;
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}
