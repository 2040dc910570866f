/**
 * Secrets through every local executor and a command step: the value reaches the step (its hash
 * comes back), is masked as *** in the logs (also when echoed in two writes), and is in no file
 * the run wrote under the prefix, no event and no error; only its name is in the identity. A
 * secret no provider resolves stops the run before any step starts; a secret file others may
 * read is refused with the fix.
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apply, command, fingerprintPayload, hasCode, lower, secret, type StepSpec } from '@cairn/core';
import { StepRunError, StepRunner, type RunnerEvent } from '../src/index.js';
import { Masker } from '../src/secrets/mask.js';
import { echoToken, throwToken } from './fixtures/secret-steps.mjs';
import { tempDirs } from './helpers/graph.js';

const tmp = tempDirs();
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/** Every file under `dir` (recursively), with its bytes. */
function filesUnder(dir: string): { path: string; bytes: Buffer }[] {
  const out: { path: string; bytes: Buffer }[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(p));
    else if (e.isFile()) out.push({ path: p, bytes: readFileSync(p) });
  }
  return out;
}

/** A 0600 secret file holding `entries`. */
function secretFile(entries: Record<string, string>, mode = 0o600): string {
  const path = join(tmp(), 'secrets.env');
  writeFileSync(path, `# test secrets\n${Object.entries(entries).map(([k, v]) => `${k}=${v}`).join('\n')}\n`, { mode });
  chmodSync(path, mode);
  return path;
}

describe('the masker', () => {
  it('masks a value split across writes, at every split point, and the longer of two overlapping values', () => {
    const value = 'tok-0123456789';
    const text = `a ${value} b ${value}${value} c`;
    for (let cut = 0; cut <= text.length; cut++) {
      for (let cut2 = cut; cut2 <= text.length; cut2 += 3) {
        const m = new Masker([value, 'tok-0']);
        const out = Buffer.concat([m.push(Buffer.from(text.slice(0, cut))), m.push(Buffer.from(text.slice(cut, cut2))), m.push(Buffer.from(text.slice(cut2))), m.end()]).toString();
        expect(out).toBe('a *** b ****** c');
      }
    }
  });
});

describe('secrets', () => {
  it('reach inline, threads, process and command steps, are masked in their logs and written nowhere', async () => {
    const token = `tok-${randomBytes(12).toString('hex')}`;
    const other = `nested-${randomBytes(8).toString('hex')}`;
    const prefix = tmp();
    const file = secretFile({ HF_TOKEN: token });
    process.env.CAIRN_TEST_NESTED_SECRET = other;
    const events: RunnerEvent[] = [];
    try {
      const inputs = { token: secret('HF_TOKEN'), nested: { list: [secret('CAIRN_TEST_NESTED_SECRET')] } };
      const inline = apply({
        name: 'inline',
        version: 'v1',
        fn: (i: { token: string; nested: { list: string[] } }, ctx) => {
          ctx.log.info(`inline got ${i.token}`);
          return { hash: sha(i.token), nestedHash: sha(i.nested.list[0] as string) };
        },
        inputs,
      });
      const threads = apply({ name: 'threads', version: 'v1', fn: echoToken, inputs, executor: 'threads' });
      const proc = apply({ name: 'proc', version: 'v1', fn: echoToken, inputs, executor: 'process' });
      const cmdOn = (name: string, executor?: string) => command({
        name,
        ...(executor !== undefined ? { executor } : {}),
        version: 'v1',
        program: 'sh',
        args: ['-c', 'printf "half %s" "${HF_TOKEN%????????????????}"; printf "%s\\n" "${HF_TOKEN#????????}"; echo "full $HF_TOKEN"; printf %s "$HF_TOKEN" | sha256sum | cut -c1-64 > "$CAIRN_OUTPUT/hash"; env | grep -c "^CAIRN_SECRET_" > "$CAIRN_OUTPUT/secret-vars"; true'],
        env: { HF_TOKEN: secret('HF_TOKEN') },
      });
      const cmd = cmdOn('cmd');
      // On threads a command step's program is started from the runner's main thread (command/main-thread.ts).
      const cmdThreads = cmdOn('cmd-threads', 'threads');
      const runner = new StepRunner({ prefix, secrets: { providers: [{ type: 'file', path: file }, { type: 'env' }] }, onEvent: (e) => events.push(e) });
      const summary = await runner.run([inline, threads, proc, cmd, cmdThreads]);
      expect(summary.counts).toEqual({ succeeded: 5 });

      // Delivered: each step saw the value (its hash came back), and the nested one from the environment provider.
      for (const h of [inline, threads, proc]) {
        const r = summary.outcome(lowerPath(runner, h))?.result as { hash: string; nestedHash: string; envHasIt?: boolean };
        expect(r.hash).toBe(sha(token));
        expect(r.nestedHash).toBe(sha(other));
      }
      // process: through the environment of the child only, taken out before the step ran.
      expect((summary.outcome(lowerPath(runner, proc))?.result as { envHasIt: boolean }).envHasIt).toBe(false);
      for (const c of [cmd, cmdThreads]) {
        const cmdOut = lowerPath(runner, c);
        expect(readFileSync(join(cmdOut, 'hash'), 'utf8').trim()).toBe(sha(token));
        expect(readFileSync(join(cmdOut, 'secret-vars'), 'utf8').trim()).toBe('0');
      }

      // Masked in each step's log: whole echoes and echoes split across two writes.
      const logs = filesUnder(prefix).filter((f) => /std(out|err)/.test(f.path));
      const logOf = (step: string) => logs.filter((f) => f.path.includes(`/${step}/`)).map((f) => f.bytes.toString('utf8')).join('');
      expect(logOf('inline')).toContain('inline got ***');
      for (const step of ['threads', 'proc']) {
        expect(logOf(step)).toContain('token is *** (echoed)');
        expect(logOf(step)).toContain('stderr sees ***');
      }
      expect(logOf('cmd')).toContain('full ***');
      expect(logOf('cmd-threads')).toContain('full ***');

      // Written nowhere: no file under the prefix, no event, holds either value.
      for (const f of filesUnder(prefix)) {
        expect(f.bytes.includes(token), `${f.path} holds the secret`).toBe(false);
        expect(f.bytes.includes(other), `${f.path} holds the secret`).toBe(false);
      }
      expect(JSON.stringify(events)).not.toContain(token);
      // Identity holds the name only.
      expect(fingerprintPayload(inline)).toContain('{"__secret__":"HF_TOKEN"}');
      expect(fingerprintPayload(inline)).not.toContain(token);
    } finally {
      delete process.env.CAIRN_TEST_NESTED_SECRET;
    }
  }, 90_000);

  it('a step error that quotes the value is masked in the run error, the record and the status', async () => {
    const token = `tok-${randomBytes(12).toString('hex')}`;
    const prefix = tmp();
    const file = secretFile({ API_KEY: token });
    const bad = apply({ name: 'bad', version: 'v1', fn: throwToken, inputs: { token: secret('API_KEY') }, executor: 'threads' });
    const events: RunnerEvent[] = [];
    const err = await new StepRunner({ prefix, secrets: { providers: [{ type: 'file', path: file }] }, onEvent: (e) => events.push(e) })
      .run([bad])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StepRunError);
    expect((err as Error).message).toContain('login failed with token ***');
    expect((err as Error).message).not.toContain(token);
    expect(JSON.stringify(events.map((e) => (e.type === 'step' ? String((e.error as Error | undefined)?.message) : '')))).not.toContain(token);
    for (const f of filesUnder(prefix)) expect(f.bytes.includes(token), `${f.path} holds the secret`).toBe(false);
  }, 60_000);

  it('a secret no provider resolves stops the run before any step starts, naming it and the step', async () => {
    const prefix = tmp();
    let ran = false;
    const first = apply({ name: 'first', version: 'v1', fn: () => ((ran = true), 1), inputs: {} });
    const needs = apply({ name: 'needs', version: 'v1', fn: () => 2, inputs: { key: secret('CAIRN_TEST_NO_SUCH_SECRET') } });
    const err = await new StepRunner({ prefix }).run([first, needs]).catch((e: unknown) => e);
    expect(hasCode(err, 'CAIRN_SECRET_UNRESOLVED')).toBe(true);
    expect((err as Error).message).toMatch(/Step "needs" needs secret CAIRN_TEST_NO_SUCH_SECRET, which no provider resolves/);
    expect(ran).toBe(false);
    expect(existsSync(join(prefix, 'first'))).toBe(false);
  }, 60_000);

  it('a secret file others may read is refused with chmod 600', async () => {
    const file = secretFile({ API_KEY: 'x-value-x' }, 0o644);
    const step = apply({ name: 'needs', version: 'v1', fn: () => 2, inputs: { key: secret('API_KEY') } });
    const err = await new StepRunner({ prefix: tmp(), secrets: { providers: [{ type: 'file', path: file }] } }).run([step]).catch((e: unknown) => e);
    expect(hasCode(err, 'CAIRN_SECRET_FILE_MODE')).toBe(true);
    expect((err as Error).message).toContain(`chmod 600 ${file}`);
    expect((err as Error).message).not.toContain('x-value-x');
    expect(statSync(file).mode & 0o777).toBe(0o644);
  }, 60_000);

  it('a command provider resolves a secret by name', async () => {
    const token = `tok-${randomBytes(8).toString('hex')}`;
    const dir = tmp();
    const script = join(dir, 'vault.sh');
    writeFileSync(script, `#!/bin/sh\n[ "$1" = "DB_PASSWORD" ] && echo "${token}" && exit 0\nexit 1\n`, { mode: 0o700 });
    const step = apply({ name: 'db', version: 'v1', fn: (i: { pw: string }) => sha(i.pw), inputs: { pw: secret('DB_PASSWORD') } });
    const runner = new StepRunner({ prefix: tmp(), secrets: { providers: [{ type: 'command', command: [script] }] } });
    const summary = await runner.run([step]);
    expect(summary.outcome(lowerPath(runner, step))?.result).toBe(sha(token));
  }, 60_000);
});

/** The output path of handle `h` under `runner`'s prefix. */
function lowerPath(runner: StepRunner, h: Parameters<typeof fingerprintPayload>[0]): string {
  return (lower([h])[0] as StepSpec).outputPath(runner.prefix());
}
