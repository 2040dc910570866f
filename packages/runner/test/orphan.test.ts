// Workers die with their runner: a `process` worker holds one end of a pipe whose other end is
// its runner's, so a SIGKILLed runner's workers stop within about a second (`threads` workers
// are threads of the runner's own process). These runners run in child processes importing dist/.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const dist = (pkg: string) => pathToFileURL(join(import.meta.dirname, '..', '..', pkg, 'dist', 'index.js')).href;
const fixture = pathToFileURL(join(import.meta.dirname, 'fixtures', 'steps.mjs')).href;
const work = mkdtempSync(join(tmpdir(), 'cairn-orphan-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return check();
}

/** Whether `pid` runs (a zombie, dead but not reaped by whatever adopted it, does not). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** The pids staged steps of `prefix` wrote (their attempt directories are beside their output paths). */
function stagedPids(prefix: string): number[] {
  if (!existsSync(prefix)) return [];
  const pids: number[] = [];
  for (const d of readdirSync(prefix)) {
    const f = join(prefix, d, 'pid');
    if (d.includes('.cairn-attempt-') && existsSync(join(prefix, d, 'ready'))) pids.push(Number(readFileSync(f, 'utf8')));
  }
  return pids;
}

describe('workers die with their runner', () => {
  it('no process or threads worker is alive 1 s after its runner was SIGKILLed (3 kills)', async () => {
    for (let round = 0; round < 3; round++) {
      const prefix = join(work, `store-${round}`);
      const script = join(work, `runner-${round}.mjs`);
      writeFileSync(
        script,
        `import { StepRunner } from ${JSON.stringify(dist('runner'))};
import { StepSpec } from ${JSON.stringify(dist('core'))};
const ref = { module: ${JSON.stringify(fixture)}, export: 'pidAndHang' };
const specs = ['process', 'process', 'threads'].map((executor, i) => new StepSpec({ name: 'hang' + i, hashAttrs: { i }, executor, ref }));
await new StepRunner({ prefix: ${JSON.stringify(prefix)} }).run(specs);
`,
      );
      const runner = spawn(process.execPath, [script], { stdio: 'ignore' });
      expect(await until(() => stagedPids(prefix).length === 3, 20_000)).toBe(true);
      const workers = stagedPids(prefix).filter((pid) => pid !== runner.pid);
      expect(workers).toHaveLength(2);
      expect(workers.every(alive)).toBe(true);
      runner.kill('SIGKILL');
      await new Promise((r) => runner.once('exit', r));
      const killedAt = Date.now();
      expect(await until(() => !workers.some(alive), 1_000)).toBe(true);
      expect(Date.now() - killedAt).toBeLessThanOrEqual(1_000);
    }
  }, 90_000);
});
