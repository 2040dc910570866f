/**
 * Property-based fuzzing of the CLI's inputs (fast-check, fixed seed, bounded runs), in-process
 * through `main(argv)`: flags (`--prefix`, `--max-concurrent`, `--executor`), `CAIRN_*` variables
 * and `cairn.config.*` values. Each case ends with exit 0, or exit 2 and a `[CAIRN_…]` code; a raw
 * crash (exit 1 without a code, or `main` rejecting) or a value known to be invalid that is
 * accepted fails the test.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import pc from 'picocolors';
import { afterAll, describe, expect, it } from 'vitest';
import type { CliContext } from '../src/context.js';
import { main } from '../src/program.js';

const SEED = 28;
const dir = mkdtempSync(join(tmpdir(), 'cairn-cli-fuzz-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** One in-process CLI call: its exit code and what it wrote. */
async function cli(args: readonly string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const stream = (add: (s: string) => void) => ({ isTTY: false, columns: 100, write: (s: string) => (add(String(s)), true) }) as unknown as NodeJS.WriteStream;
  const ctx: CliContext = {
    stdout: stream((s) => (stdout += s)),
    stderr: stream((s) => (stderr += s)),
    env: { NO_COLOR: '1', ...env },
    cwd: dir,
    verbose: false,
    configFile: undefined,
    showConfig: false,
    colors: pc.createColors(false),
  };
  const code = await main(['node', 'cairn', ...args], ctx);
  return { code, stdout, stderr };
}

/** What a call did: accepted (exit 0), typed (exit 2 with a code), or raw (anything else). */
async function outcome(args: readonly string[], env: Record<string, string> = {}): Promise<'accepted' | 'typed' | 'raw'> {
  try {
    const r = await cli(args, env);
    if (r.code === 0) return 'accepted';
    return r.code === 2 && /\[CAIRN_[A-Z_]+\]/.test(r.stderr) ? 'typed' : 'raw';
  } catch {
    return 'raw';
  }
}

let configs = 0;
/** Writes a config module exporting `source` as its default and returns its path (a new file each time: imports are cached by URL). */
function configFile(source: string): string {
  const file = join(dir, `cairn.config.${++configs}.mjs`);
  writeFileSync(file, `export default ${source};\n`);
  return file;
}

/** Strings a user might type, the awkward ones included. */
const typed = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('', ' ', '0x10', '1e3', ' 4 ', '-1', '0', '4', '~', '~/x', '~nobody/x', '$STORE', '\u0000', 'a\nb', '..', '/proc/x'));

describe('flags and variables', () => {
  it('any value of --prefix, --max-concurrent, --executor or a CAIRN_* variable exits 0 or 2 with a CAIRN_ code', async () => {
    const raw: unknown[] = [];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('--prefix', '--max-concurrent', '--executor', 'CAIRN_PREFIX', 'CAIRN_MAX_CONCURRENT', 'CAIRN_FORCE_RUN_FAILED', 'CAIRN_EXECUTOR'), typed, async (what, value) => {
        const r = what.startsWith('--') ? await outcome(['config', `${what}=${value}`]) : await outcome(['config'], { [what]: value });
        if (r === 'raw') raw.push({ what, value });
        return r !== 'raw';
      }),
      { seed: SEED, numRuns: 300 },
    );
    expect(raw).toEqual([]);
  });

  it('values known to be invalid are refused', async () => {
    const invalid = fc.oneof(
      fc.record({ flag: fc.constant('--max-concurrent'), value: fc.constantFrom('0', '-1', '0x10', '1e3', ' 4', '4.5', '', 'four') }),
      fc.record({ flag: fc.constant('--prefix'), value: fc.constantFrom('', ' ', '\t', '~nobody/x', '~root') }),
      fc.record({ flag: fc.constant('CAIRN_MAX_CONCURRENT'), value: fc.constantFrom('0', '0x10', '1e3', 'x') }),
      fc.record({ flag: fc.constant('CAIRN_PREFIX'), value: fc.constantFrom('', '  ', '~nobody') }),
      fc.record({ flag: fc.constant('CAIRN_FORCE_RUN_FAILED'), value: fc.constantFrom('maybe', '2') }),
    );
    const silent: unknown[] = [];
    await fc.assert(
      fc.asyncProperty(invalid, async ({ flag, value }) => {
        const r = flag.startsWith('--') ? await outcome(['config', `${flag}=${value}`]) : await outcome(['config'], { [flag]: value });
        if (r !== 'typed') silent.push({ flag, value, r });
        return r === 'typed';
      }),
      { seed: SEED, numRuns: 100 },
    );
    expect(silent).toEqual([]);
  });
});

describe('config file values', () => {
  const keys = ['prefix', 'maxConcurrent', 'executors', 'remoteExecutor', 'stores', 'pools', 'defaults', 'forceRunFailed', 'layout', 'onDrift', 'versions', 'leases', 'bogus'];
  /** JS source of a value (a config is code, so any JSON value, null-prototype objects and deep arrays too). */
  const source = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
    fc.constantFrom('Object.create(null)', '{ x: null }', '{ x: { use: 42 } }', '{ x: { use: "nope" } }', '[]', 'null', '() => 1', 'Symbol("s")', '2 ** 31', 'NaN', '{ pollMs: 2 ** 31 }', '{ staleMs: -1 }', JSON.stringify(Array.from({ length: 1 }).reduce<unknown>((a) => [a], 0))),
    fc.integer({ min: 50, max: 200 }).map((n) => `${'['.repeat(n)}1${']'.repeat(n)}`),
  );

  it('any value of any key exits 0 or 2 with a CAIRN_ code', async () => {
    const raw: unknown[] = [];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...keys), source, async (key, value) => {
        const r = await outcome(['--config', configFile(`{ ${key}: ${value} }`), 'config']);
        if (r === 'raw') raw.push({ key, value });
        return r !== 'raw';
      }),
      { seed: SEED, numRuns: 150 },
    );
    expect(raw).toEqual([]);
  });

  it('values known to be invalid are refused', async () => {
    const invalid = fc.constantFrom(
      '{ maxConcurrent: 0 }',
      '{ maxConcurrent: "4" }',
      '{ maxConcurrent: 1.5 }',
      '{ layout: "flat" }',
      '{ onDrift: "ignore" }',
      '{ leases: { pollMs: 2 ** 31 } }',
      '{ leases: { heartbeatMs: 60000, staleMs: 30000 } }',
      '{ executors: { x: null } }',
      '{ executors: { x: { use: "nope" } } }',
      '{ remoteExecutor: "nope" }',
      '{ remoteExecutor: 7 }',
      '{ prefix: "" }',
      '{ prefix: "~nobody/x" }',
      '{ pools: { gpu: -1 } }',
      '{ prefx: "./store" }',
      'null',
    );
    const silent: unknown[] = [];
    await fc.assert(
      fc.asyncProperty(invalid, async (config) => {
        const r = await outcome(['--config', configFile(config), 'config']);
        if (r !== 'typed') silent.push({ config, r });
        return r === 'typed';
      }),
      { seed: SEED, numRuns: 60 },
    );
    expect(silent).toEqual([]);
  });
});
