/**
 * How tools find and read what a local store holds ({@link StoreBrowser}). The store is keyed
 * by output path and keeps no index, so a prefix is walked: a directory with a status, a record
 * or attempt logs is a step (its contents are not descended into), and so is a path with a lease
 * beside it (a step running for the first time has no output directory yet). What the store keeps
 * beside outputs (leases, attempts, checkpoints) is not walked; attempt directories and outputs
 * moved aside by dead runs are the leftovers.
 */
import { existsSync, readdirSync, type Dirent } from 'node:fs';
import { appendFile, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { RECORD_FILE } from '../records.js';
import { STATUS_FILE } from '../status.js';
import type { CheckpointSummary, FoundStep, Leftover, ListedFile, StoreBrowser } from '../store.js';
import { checkpointRoot, leaseFile, localPath, localLayout } from './layout.js';

/** Directories directly under a prefix that are never steps. */
const SKIP = new Set(['.cairn', 'node_modules', '.git']);
const LEASE = /^\.(.+)\.cairn-lease$/;
const LEFTOVER = /^\.(.+)\.cairn-(?:attempt|old)-/;
const GENERATION = /^gen-(\d+)$/;

function isStepDir(dir: string, names: ReadonlySet<string>): boolean {
  return names.has(STATUS_FILE) || names.has(RECORD_FILE) || existsSync(join(dir, '.cairn', 'logs'));
}

interface Walk {
  readonly steps: FoundStep[];
  readonly leftovers: Leftover[];
}

/** One walk of `prefix` finds both steps and leftovers. */
function walk(prefix: string, maxDepth: number): Walk {
  const found = new Map<string, boolean>();
  const leftovers: Leftover[] = [];
  if (!existsSync(prefix)) return { steps: [], leftovers };
  const stack: [string, number][] = [[prefix, 0]];
  while (stack.length > 0) {
    const [dir, depth] = stack.pop() as [string, number];
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    const names = new Set(entries.map((e) => e.name));
    if (depth > 0 && isStepDir(dir, names)) {
      found.set(dir, found.get(dir) === true || existsSync(leaseFile(dir)));
      continue;
    }
    for (const e of entries) {
      const lease = LEASE.exec(e.name);
      if (lease !== null) {
        const step = join(dir, lease[1] as string);
        // A leased step with an output directory is found (and flagged) when that directory is walked.
        if (!names.has(lease[1] as string)) found.set(step, true);
      }
      const m = LEFTOVER.exec(e.name);
      if (m !== null && e.isDirectory()) leftovers.push({ path: join(dir, e.name), step: join(dir, m[1] as string) });
    }
    if (depth >= maxDepth) continue;
    for (const e of entries) {
      if (e.isDirectory() && !(depth === 0 && SKIP.has(e.name)) && e.name !== '.cairn' && !localLayout.isSibling(e.name)) stack.push([join(dir, e.name), depth + 1]);
    }
  }
  const steps = [...found].map(([path, leased]) => ({ path, leased })).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { steps, leftovers: leftovers.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)) };
}

/** The local store's browser: plain files under plain paths (`file://` URLs accepted). */
export class LocalBrowser implements StoreBrowser {
  async findSteps(prefix: string, maxDepth: number): Promise<readonly FoundStep[]> {
    return walk(localPath(prefix), maxDepth).steps;
  }

  async findLeftovers(prefix: string, maxDepth: number): Promise<readonly Leftover[]> {
    return walk(localPath(prefix), maxDepth).leftovers;
  }

  async listFiles(dir: string): Promise<readonly ListedFile[]> {
    const root = localPath(dir);
    if (!existsSync(root)) return [];
    const out: ListedFile[] = [];
    for (const e of await readdir(root, { withFileTypes: true, recursive: true })) {
      if (!e.isFile()) continue;
      const path = join(e.parentPath, e.name);
      out.push({ path, lastModified: (await stat(path)).mtimeMs });
    }
    return out;
  }

  async readFile(path: string): Promise<Uint8Array | null> {
    return readFile(localPath(path)).catch(() => null);
  }

  async writeFile(path: string, data: string | Uint8Array): Promise<void> {
    const p = localPath(path);
    await mkdir(dirname(p), { recursive: true });
    await writeFile(p, data);
  }

  async appendFile(path: string, data: string | Uint8Array): Promise<void> {
    const p = localPath(path);
    await appendFile(p, data).catch(async (err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
      await mkdir(dirname(p), { recursive: true });
      await appendFile(p, data);
    });
  }

  /** The checkpoint directory beside the output at `path` (its generations `gen-N`, layout.ts). */
  async checkpoints(path: string): Promise<CheckpointSummary | null> {
    const root = checkpointRoot(localPath(path));
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

  async remove(path: string): Promise<void> {
    const p = localPath(path);
    await rm(p, { recursive: true, force: true });
    await rm(leaseFile(p), { force: true });
  }
}
