/** `notify` and `secrets` in `cairn.config.*` reach the runner; a webhook that is not http(s), or an unknown secret provider, is refused when the config loads. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { makeRunner } from '../src/make-runner.js';

const dir = mkdtempSync(join(tmpdir(), 'cairn-cli-notify-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function configFile(name: string, body: string): string {
  const file = join(dir, `${name}.mjs`);
  writeFileSync(file, `export default ${body};\n`);
  return file;
}

describe('notify in the config file', () => {
  it('is handed to the runner as given', async () => {
    const notify = { slowStepMs: 60000, sinks: [{ type: 'webhook', url: 'https://chat.example/hook', format: 'slack' }, { type: 'command', command: ['notify', '--json'] }] };
    const config = await loadConfig({ config: configFile('ok', `{ prefix: './store', notify: ${JSON.stringify(notify)} }`) }, {}, dir);
    expect(config.notify).toEqual(notify);
    expect(() => makeRunner(config)).not.toThrow();
  });

  it('secrets providers are handed to the runner; a bad provider is refused when the config loads', async () => {
    const secrets = { providers: [{ type: 'env' }, { type: 'file', path: '/etc/cairn/secrets' }] };
    const config = await loadConfig({ config: configFile('secrets', `{ prefix: './store', secrets: ${JSON.stringify(secrets)} }`) }, {}, dir);
    expect(config.secrets).toEqual(secrets);
    expect(() => makeRunner(config)).not.toThrow();
    const bad = await loadConfig({ config: configFile('badsecrets', `{ secrets: { providers: [{ type: 'vault' }] } }`) }, {}, dir).catch((e: unknown) => e);
    expect(bad).toMatchObject({ code: 'CAIRN_CONFIG', message: expect.stringMatching(/secrets\.providers\[0\]\.type must be "env", "file" or "command"/) });
  });

  it('a webhook URL that is not http(s) is CAIRN_NOTIFY_URL when the config loads', async () => {
    const err = await loadConfig({ config: configFile('ftp', `{ notify: { sinks: [{ type: 'webhook', url: 'ftp://chat.example/hook' }] } }`) }, {}, dir).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'CAIRN_NOTIFY_URL', message: expect.stringMatching(/notify\.sinks\[0\]\.url uses ftp:; a webhook must be an http:\/\/ or https:\/\/ URL/) });
    const typo = await loadConfig({ config: configFile('typo', `{ notify: { sinks: [], slowStepMS: 5 } }`) }, {}, dir).catch((e: unknown) => e);
    expect(typo).toMatchObject({ code: 'CAIRN_UNKNOWN_OPTION' });
  });
});
