/**
 * Store plugins in `cairn.config.*`: `stores: { name: { use, options } }` reaches the runner's
 * store registry (a factory, or the function that makes one), a bad entry is one clear
 * CAIRN_CONFIG naming it, and `cairn config` never prints a credential. The commands on an
 * object store are tested against a real gateway in packages/store-s3/test/cli.e2e.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryStore, StepRunner, type StoreFactory } from '@cairn/runner';
import { loadConfig } from '../src/config.js';
import { configCommand } from '../src/commands/config.js';
import type { CliContext } from '../src/context.js';
import { makeRunner, storesOf } from '../src/make-runner.js';

const dir = mkdtempSync(join(tmpdir(), 'cairn-cli-stores-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A config file exporting `body` (JavaScript source of the object). */
function configFile(name: string, body: string): string {
  const file = join(dir, `${name}.mjs`);
  writeFileSync(file, `export default ${body};\n`);
  return file;
}

/** A context whose stdout is collected. */
function captured(): { ctx: CliContext; text: () => string } {
  let text = '';
  const stream = { write: (s: string) => ((text += s), true), isTTY: false, columns: 100 } as unknown as NodeJS.WriteStream;
  const colors = new Proxy({}, { get: () => (s: string) => s }) as CliContext['colors'];
  return { ctx: { stdout: stream, stderr: stream, env: {}, cwd: dir, verbose: false, configFile: undefined, showConfig: false, colors }, text: () => text };
}

const memFactory = (): StoreFactory => ({ name: 'anything', schemes: ['mem'], create: () => new MemoryStore() });
(globalThis as { __memFactory?: () => StoreFactory }).__memFactory = memFactory;

describe('stores in the config file', () => {
  it('a factory or the function that makes one is registered under its key, with its options', async () => {
    const file = configFile('ok', `{ prefix: 'mem://pool/x', stores: { mem: { use: globalThis.__memFactory, options: { size: 2 } }, other: { use: { name: 'o', schemes: ['other'], create: () => null } } } }`);
    const config = await loadConfig({ config: file }, {}, dir);
    const { stores, storeOptions } = storesOf(config);
    expect(stores.map((s) => [s.name, s.schemes])).toEqual([
      ['mem', ['mem']],
      ['other', ['other']],
    ]);
    expect(storeOptions).toEqual({ mem: { size: 2 } });
    const runner = makeRunner(config);
    expect(runner.store).toBeInstanceOf(MemoryStore);
    expect(new StepRunner({ prefix: 'mem://p', ...storesOf(config) }).store.kind).toBe('memory');
  });

  it('a bad entry is one CAIRN_CONFIG naming it and the fix', async () => {
    const err = await loadConfig({ config: configFile('bad', `{ stores: { s3: { use: 's3' } } }`) }, {}, dir).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'CAIRN_CONFIG', message: expect.stringMatching(/stores\.s3\.use must be a store factory \(s3StoreFactory\(\)\) or the function that makes one \(s3StoreFactory\)/) });
    const list = await loadConfig({ config: configFile('list', `{ stores: [] }`) }, {}, dir).catch((e: unknown) => e);
    expect(list).toMatchObject({ code: 'CAIRN_CONFIG', message: expect.stringMatching(/stores must be an object keyed by store name/) });
    const notFactory = await loadConfig({ config: configFile('fn', `{ stores: { s3: { use: () => 42 } } }`) }, {}, dir);
    expect(() => storesOf(notFactory)).toThrow(/^Store "s3": use did not give a store factory \(\{ name, schemes, create \}\); pass the plugin's factory/);
  });

  it('cairn config shows the stores and hides every credential-looking option', async () => {
    const file = configFile('secret', `{ prefix: 'mem://p', stores: { mem: { use: globalThis.__memFactory, options: { endpoint: 'http://127.0.0.1:7480', credentials: { accessKeyId: 'AKIDVISIBLE', secretAccessKey: 'SHOULD-NOT-PRINT' } } } } }`);
    for (const json of [false, true]) {
      const { ctx, text } = captured();
      ctx.configFile = file;
      expect(await configCommand(ctx, { json })).toBe(0);
      expect(text()).toContain('http://127.0.0.1:7480');
      expect(text()).toContain('(hidden)');
      expect(text()).not.toContain('SHOULD-NOT-PRINT');
      expect(text()).not.toContain('AKIDVISIBLE');
    }
  });
});
