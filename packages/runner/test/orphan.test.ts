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
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

describe('process executor', () => {
  it('a worker whose runner was killed with SIGKILL cancels itself instead of running on as an orphan', async () => {
    const prefix = join(work, 'store');
    const script = join(work, 'runner.mjs');
    writeFileSync(
      script,
      `import { StepRunner } from ${JSON.stringify(dist('runner'))};
import { StepSpec } from ${JSON.stringify(dist('core'))};
const spec = new StepSpec({ name: 'orphan', executor: 'process', ref: { module: ${JSON.stringify(fixture)}, export: 'waitForAbort' } });
await new StepRunner({ prefix: ${JSON.stringify(prefix)} }).run([spec]);
`,
    );
    const runner = spawn(process.execPath, [script], { stdio: 'ignore' });
    const stepDir = () => {
      const hit = existsSync(prefix) ? readdirSync(prefix).find((d) => d.startsWith('orphan-')) : undefined;
      return hit === undefined ? undefined : join(prefix, hit);
    };
    const log = () => {
      const d = stepDir();
      const file = d === undefined ? undefined : join(d, '.cairn', 'logs', 'attempt-1.stdout');
      return file !== undefined && existsSync(file) ? readFileSync(file, 'utf8') : '';
    };
    expect(await until(() => log().includes('waiting for abort'), 20_000)).toBe(true);
    runner.kill('SIGKILL');
    const aborted = () => {
      const d = stepDir();
      return d !== undefined && existsSync(join(d, 'aborted.txt'));
    };
    expect(await until(aborted, 10_000)).toBe(true);
    expect(readFileSync(join(stepDir() as string, 'aborted.txt'), 'utf8')).toBe('CAIRN_CANCELLED');
  }, 60_000);
});
