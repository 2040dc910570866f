/**
 * A program that writes 1 GiB to stdout does not grow the runner's memory: its output goes
 * straight into the attempt's log file (the runner holds a file descriptor, never the bytes),
 * and a failure quotes a bounded tail of stderr however much was written. The runner runs in a
 * child process (the built dist/) so its peak RSS (getrusage's maxRSS) is its own; the bound is
 * on memory only, never on time.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const pkg = fileURLToPath(new URL('..', import.meta.url));
const fixture = join(pkg, 'test/fixtures/big-log-runner.mjs');
const project = mkdtempSync(join(tmpdir(), 'cairn-big-log-'));
const MiB = 1 << 20;
/** What the runner's peak RSS may grow by while 1 GiB passes through its program: 1/16 of it. */
const BOUND = 64 * MiB;

beforeAll(() => {
  if (!existsSync(join(pkg, 'dist/index.js'))) execFileSync('npx', ['tsup'], { cwd: pkg, stdio: 'ignore' });
  if (!existsSync(join(pkg, '../core/dist/index.js'))) execFileSync('npx', ['tsup'], { cwd: join(pkg, '../core'), stdio: 'ignore' });
  // loud.py MB [stderr CODE]: MB MiB to stdout (or stderr), then a last line, then exit CODE.
  writeFileSync(
    join(project, 'loud.py'),
    `import sys\nchunk = b"y" * (1 << 20)\nout = sys.stderr.buffer if sys.argv[2:3] == ["stderr"] else sys.stdout.buffer\nfor _ in range(int(sys.argv[1])):\n    out.write(chunk)\nout.write(b"\\nthe last line\\n")\nout.flush()\nsys.exit(int(sys.argv[3]) if len(sys.argv) > 3 else 0)\n`,
  );
}, 120_000);
afterAll(() => rmSync(project, { recursive: true, force: true }));

function runChild(executor: string, mb: number, failMb?: number): { before: number; after: number; succeeded: number; message?: string; prefix: string } {
  const prefix = join(project, `store-${executor}`);
  const r = spawnSync(process.execPath, [fixture, prefix, project, executor, String(mb), ...(failMb === undefined ? [] : [String(failMb)])], { encoding: 'utf8', timeout: 240_000 });
  if (r.status !== 0) throw new Error(`big-log runner exited ${r.status} ${r.signal}: ${r.stderr}`);
  return { ...JSON.parse(r.stdout.trim().split('\n').pop() as string), prefix };
}

/** The largest attempt log under `dir` (`<step>/.cairn/logs/attempt-N.stdout`). */
function biggestLog(dir: string): number {
  return Math.max(0, ...readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => /(^|\/)\.cairn\/logs\/attempt-\d+\.std(out|err)$/.test(f)).map((f) => statSync(join(dir, f)).size));
}

describe.each(['inline', 'process'] as const)('1 GiB of program output on %s', (executor) => {
  it("streams to the log file; the runner's peak RSS grows by less than 64 MiB; a failure's stderr tail stays short", () => {
    const r = runChild(executor, 1024, executor === 'inline' ? 256 : undefined);
    try {
      expect(r.succeeded).toBe(1);
      expect(biggestLog(r.prefix)).toBeGreaterThanOrEqual(1024 * MiB);
      expect(r.after - r.before).toBeLessThan(BOUND);
      if (r.message !== undefined) {
        // 256 MiB on stderr, then exit 3: the message quotes the last lines only (the tail reads 4 KiB from the end of the log).
        expect(r.message).toContain('exited with code 3');
        expect(r.message).toContain('the last line');
        expect(r.message.length).toBeLessThan(8192);
      }
    } finally {
      rmSync(r.prefix, { recursive: true, force: true });
    }
  }, 300_000);
});
