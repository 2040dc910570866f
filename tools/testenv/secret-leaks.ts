/**
 * What the secret-delivery tests look for: every file under some directories that holds a
 * value, and every `ps -eo args` line that shows it while a step runs.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The sha256 hex of `s` (what the fixture steps write). */
export const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

/** Every regular file under `roots` (recursively, symlinks not followed) for which `keep(path)` holds. */
function filesWhere(roots: readonly string[], keep: (path: string) => boolean): string[] {
  const out: string[] = [];
  const walk = (p: string): void => {
    let st;
    try {
      st = lstatSync(p);
    } catch {
      return;
    }
    if (st.isDirectory()) for (const e of readdirSync(p)) walk(join(p, e));
    else if (st.isFile() && keep(p)) out.push(p);
  };
  for (const r of roots) walk(r);
  return out;
}

/** Every regular file under `roots` whose bytes contain `value`. */
export function filesHolding(roots: readonly string[], value: string): string[] {
  const needle = Buffer.from(value);
  return filesWhere(roots, (p) => readFileSync(p).includes(needle));
}

/** Every regular file under `roots` named `name`. */
export function filesNamed(roots: readonly string[], name: string): string[] {
  return filesWhere(roots, (p) => p.endsWith(`/${name}`));
}

/** Samples `ps -eo args` until stopped; `stop()` says how many samples were taken and every line that showed `value`. */
export function sampleCommandLines(value: string, everyMs = 100): { stop(): Promise<{ samples: number; hits: string[] }> } {
  let samples = 0;
  const hits: string[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const { stdout } = await run('ps', ['-eo', 'args'], { maxBuffer: 64 * 1024 * 1024 }).catch(() => ({ stdout: '' }));
      samples++;
      for (const line of stdout.split('\n')) if (line.includes(value)) hits.push(line);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return { samples, hits };
    },
  };
}
