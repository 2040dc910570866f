/**
 * The CLI reads stores through the store contract alone (`Store` methods and `Store.browse`):
 * a memory store registered from `cairn.config.*` has no files anywhere, so every command below
 * that works on it proves the CLI walks and reads nothing around the contract. A pipeline runs
 * through `cairn run` into it, then `status`, `explain`, `logs`, `clean` and `unlock` work on
 * what it holds, including a failed step, a stale lease and a run journal.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStore, type StoreFactory } from '@cairn/runner';
import type { CliContext } from '../src/context.js';
import { main } from '../src/program.js';

const dir = mkdtempSync(join(tmpdir(), 'cairn-cli-contract-'));
const store = new MemoryStore();
(globalThis as { __contractStore?: StoreFactory }).__contractStore = { name: 'mem', schemes: ['mem'], create: () => store };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const config = join(dir, 'cairn.config.mjs');
const pipeline = join(dir, 'pipeline.mjs');
const core = new URL('../../core/src/index.ts', import.meta.url).href;

/** Runs the CLI in this process (the memory store lives here); output collected. */
async function cairn(...args: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const stream = { write: (s: string) => ((out += s), true), isTTY: false, columns: 120 } as unknown as NodeJS.WriteStream;
  const colors = new Proxy({}, { get: () => (s: string) => s }) as CliContext['colors'];
  const ctx: CliContext = { stdout: stream, stderr: stream, env: {}, cwd: dir, verbose: false, configFile: config, showConfig: false, colors };
  const code = await main(['node', 'cairn', ...args], ctx);
  return { code, out };
}

describe('the CLI on a store it knows only through the contract (a memory store)', () => {
  beforeAll(() => {
    writeFileSync(config, `export default { prefix: 'mem://pool', stores: { mem: { use: globalThis.__contractStore } } };\n`);
    writeFileSync(
      pipeline,
      `import { apply, defineStep } from ${JSON.stringify(core)};
export const tokenize = defineStep(import.meta.url, 'tokenize', async (_, ctx) => { ctx.log.info('tokenizing'); return 42; });
export const fail = defineStep(import.meta.url, 'fail', async (_, ctx) => { ctx.log.error('about to fail'); throw new Error('no GPU here'); });
export const targets = [
  apply({ name: 'tokens', fn: tokenize, version: 'v1', inputs: {} }),
  apply({ name: 'broken', fn: fail, version: 'v1', inputs: {} }),
];
`,
    );
  });

  it('runs a pipeline into it, then status, explain and logs read it back', async () => {
    const run = await cairn('run', pipeline, '--executor', 'inline');
    expect(run.code).not.toBe(0); // `broken` failed
    expect(run.out).toMatch(/broken/);
    const paths = [...store.entries.keys()];
    expect(paths.some((p) => p.startsWith('mem://pool/tokens'))).toBe(true);

    const status = await cairn('status', '--json');
    expect(status.code).toBe(0);
    const rows = JSON.parse(status.out) as { step?: string; name?: string; status?: string | null }[] | { steps: { step?: string; status?: string | null }[] };
    const text = JSON.stringify(rows);
    expect(text).toMatch(/tokens/);
    expect(text).toMatch(/SUCCESS/);
    expect(text).toMatch(/FAILED/);

    const explain = await cairn('explain', 'tokens');
    expect(explain.code).toBe(0);
    expect(explain.out).toMatch(/tokens/);

    const logs = await cairn('logs', 'broken');
    expect(logs.code).toBe(0);
    expect(logs.out).toMatch(/no GPU here/);

    // The run journal went through the browser (nothing on disk).
    const journals = await store.browse.listFiles('mem://pool/.cairn/runs');
    expect(journals.length).toBe(1);
    expect(readdirSync(dir).sort()).toEqual(['cairn.config.mjs', 'pipeline.mjs']);
    expect(readdirSync(process.cwd()).filter((n) => n.startsWith('mem'))).toEqual([]);
  });

  it('clean removes the failed step through the browser; a stale lease is listed and cleared by unlock', async () => {
    const listed = await cairn('clean');
    expect(listed.code).toBe(0);
    expect(listed.out).toMatch(/would remove broken/);
    const removed = await cairn('clean', '--yes');
    expect(removed.code).toBe(0);
    expect([...store.entries.keys()].some((p) => p.startsWith('mem://pool/broken'))).toBe(false);
    expect([...store.entries.keys()].some((p) => p.startsWith('mem://pool/tokens'))).toBe(true);

    // A dead runner's lease on a step that never got an output.
    store.putLease('mem://pool/ghost-0123456789abcdef', { worker_id: 'dead', timestamp: Date.now() / 1000 - 3600, host: 'elsewhere', pid: 999_999, processStartTime: 1, runId: 'r-dead', token: 't' } as never);
    const unlock = await cairn('unlock', '--stale');
    expect(unlock.code).toBe(0);
    expect(unlock.out).toMatch(/ghost/);
    expect(await store.readLease('mem://pool/ghost-0123456789abcdef')).toBeNull();
  });
});
