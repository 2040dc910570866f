/**
 * The secrets file remote executors hand a step (secrets/deliver.ts): the variables that carry
 * a worker step's and a command step's secrets, and `export NAME='value'` lines that a real
 * POSIX shell (`.`) and the Node parser both read back byte for byte, with quotes, newlines,
 * `$`, backslashes and backticks left alone.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { command, hasCode, lower, makeTask, secret } from '@cairn/core';
import { describe, expect, it } from 'vitest';
import { parseSecretsFile, secretsFileText, secretVars, stripSecretEnv, takeSecretsFile } from '../src/secrets/deliver.js';

const values = ['plain', "it's", "''", 'a\nb\n', '$HOME `id` \\ "q"', '', 'ünïcode ✓', "'\n'"];

describe('the secrets file', () => {
  it.each(values.map((v) => [JSON.stringify(v), v]))('sh and the parser read %s back unchanged', (_, v) => {
    const text = secretsFileText({ A_B: v, OTHER: 'x' }, 'step');
    expect(parseSecretsFile(text)).toEqual({ A_B: v, OTHER: 'x' });
    const dir = mkdtempSync(join(tmpdir(), 'cairn-secrets-file-'));
    writeFileSync(join(dir, 's'), text, { mode: 0o600 });
    expect(execFileSync('sh', ['-c', '. ./s; printf %s "$A_B"'], { cwd: dir, encoding: 'utf8' })).toBe(v);
  });

  it('takeSecretsFile reads a worker step\'s secrets by name and deletes the file; a missing file is none', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'cairn-secrets-file-')), 'secrets.sh');
    writeFileSync(path, secretsFileText({ CAIRN_SECRET_HF_TOKEN: 'v1', CAIRN_SECRET_DB: "p'w" }, 's'), { mode: 0o600 });
    expect(takeSecretsFile(path)).toEqual({ HF_TOKEN: 'v1', DB: "p'w" });
    expect(existsSync(path)).toBe(false);
    expect(takeSecretsFile(path)).toEqual({});
  });

  it('a malformed file and a NUL byte are refused without quoting a value', () => {
    expect(() => parseSecretsFile("export A='x'\nrm -rf /\n")).toThrow(/malformed at byte 13/);
    let err: unknown;
    try {
      secretsFileText({ A: 'xq-val\0ue' }, 'step');
    } catch (e) {
      err = e;
    }
    expect(hasCode(err, 'CAIRN_CONFIG')).toBe(true);
    expect((err as Error).message).not.toContain('xq-val');
  });

  it('a worker step gets CAIRN_SECRET_<NAME>; a command step the env variables its template maps to secrets, which stripSecretEnv takes out', () => {
    const step = command({ name: 'c', version: 'v1', program: 'sh', args: ['-c', 'true'], env: { TOKEN: secret('HF_TOKEN'), PLAIN: 'p' } });
    const spec = lower([step])[0]!;
    const task = makeTask(spec, { outputPath: '/tmp/out', depPaths: {}, attempt: 1 });
    expect(secretVars(task, { HF_TOKEN: 'v' })).toEqual({ TOKEN: 'v' });
    expect(() => secretVars(task, {})).toThrow(/needs secret HF_TOKEN, which was not handed to it/);
    expect((stripSecretEnv(task.inputs) as { env: unknown }).env).toEqual({ PLAIN: 'p' });
    expect(secretVars({ ...task, ref: { module: 'file:///x.mjs', export: 'f' } }, { HF_TOKEN: 'v' })).toEqual({ CAIRN_SECRET_HF_TOKEN: 'v' });
    expect(secretVars(task, undefined)).toBeUndefined();
  });
});
