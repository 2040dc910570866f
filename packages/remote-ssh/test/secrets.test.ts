/**
 * Secrets on the SSH executor, on a real sshd: an `apply` step run detached, one run in the
 * host's persistent worker and a command step (a POSIX shell on the host) each get HF_TOKEN
 * (they write its hash) while no file under the store, the host's work dir (job dirs, scripts,
 * tasks, logs, the worker's log) or sshd's directory holds it, `ps` never shows it, and no
 * secrets file is left behind. A secret no provider resolves fails before anything is launched.
 * A step that echoes its secret (split across two writes a second apart): the bytes the status
 * checks stream into the local log are masked on write, so that log never holds the value.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apply, command, hasCode, lower, secret, type StepSpec } from '@cairn/core';
import { StepRunner } from '@cairn/runner';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashCommand } from '../../../tools/testenv/grid-secrets.js';
import { filesHolding, filesNamed, sampleCommandLines, sha256 } from '../../../tools/testenv/secret-leaks.js';
import { hashToken } from '../../../tools/testenv/secret-steps.mjs';
import { createSshExecutor } from '../src/index.js';
import { hostOf, removeScratch, scratch, sshdOrSkip, startSshd, type SshdInstance } from './helpers.js';

const run = sshdOrSkip();

describe.runIf(run)('secrets on the SSH executor', () => {
  let s: SshdInstance;
  const open: ReturnType<typeof createSshExecutor>[] = [];
  const vault = mkdtempSync(join(tmpdir(), 'cairn-vault-'));
  beforeAll(async () => {
    s = await startSshd();
  });
  afterAll(async () => {
    await Promise.all(open.map((e) => e.stop()));
    await s?.stop();
    removeScratch();
    rmSync(vault, { recursive: true, force: true });
  });
  const ssh = (name: string, worker: 'always' | 'never') => {
    const e = createSshExecutor({ name, hosts: [hostOf(s, name)], pollIntervalMs: 100, worker });
    open.push(e);
    return e;
  };

  it('detached, in the worker and as a command, a step gets HF_TOKEN; no file, script, log or command line shows it', async () => {
    const token = `hf_${randomBytes(16).toString('hex')}`;
    const file = join(vault, 'secrets.env');
    writeFileSync(file, `HF_TOKEN=${token}\n`, { mode: 0o600 });
    const detached = ssh('detached', 'never');
    const inWorker = ssh('worker', 'always');
    const worker = (name: string, executor: string) => apply({ name, version: 'v1', fn: hashToken, inputs: { token: secret('HF_TOKEN'), holdMs: 1500 }, executor });
    const steps = [worker('alone', detached.name), worker('in-worker', inWorker.name), hashCommand('cmd', detached.name)];
    const prefix = scratch();
    const printed: string[] = [];
    const logger = { info: (m: string) => printed.push(m), warn: (m: string) => printed.push(m), error: (m: string) => printed.push(m) };
    const ps = sampleCommandLines(token);
    let summary;
    try {
      summary = await new StepRunner({ prefix, executors: [detached, inWorker], secrets: { providers: [{ type: 'file', path: file }] }, logger, onEvent: (e) => printed.push(JSON.stringify(e)) }).run(steps);
    } finally {
      const seen = await ps.stop();
      expect(seen.hits).toEqual([]);
      expect(seen.samples).toBeGreaterThan(0);
    }
    expect(summary.counts).toEqual({ succeeded: 3 });
    for (const step of steps) {
      const out = (lower([step])[0] as StepSpec).outputPath(prefix);
      expect(readFileSync(join(out, 'hash'), 'utf8').trim(), step.name).toBe(sha256(token));
    }
    // A worker step's secrets are not in its environment while it runs (taken out, or never put there).
    for (const step of steps.slice(0, 2)) expect((summary.outcome((lower([step])[0] as StepSpec).outputPath(prefix))?.result as { envHasIt: boolean }).envHasIt).toBe(false);
    expect(filesHolding([prefix, s.dir], token)).toEqual([]);
    expect(filesNamed([prefix, s.dir], 'secrets.sh')).toEqual([]);
    expect(printed.join('\n')).not.toContain(token);
  }, 180_000);

  it('a secret no provider resolves fails before anything is launched, naming step and secret', async () => {
    const e = ssh('missing', 'never');
    const step = apply({ name: 'needs-missing', version: 'v1', fn: hashToken, inputs: { token: secret('CAIRN_TEST_NO_SUCH_TOKEN'), holdMs: 0 }, executor: e.name });
    const err = await new StepRunner({ prefix: scratch(), executors: [e] }).run([step]).catch((x: unknown) => x);
    expect(hasCode(err, 'CAIRN_SECRET_UNRESOLVED')).toBe(true);
    expect((err as Error).message).toContain('Step "needs-missing" needs secret CAIRN_TEST_NO_SUCH_TOKEN');
    expect(filesHolding([s.dir], 'needs-missing')).toEqual([]);
  }, 60_000);

  it('bytes streamed from the host are masked on write: the local log never holds the value while the step runs', async () => {
    const token = `hf_${randomBytes(16).toString('hex')}`;
    const file = join(vault, 'echo.env');
    writeFileSync(file, `HF_TOKEN=${token}\n`, { mode: 0o600 });
    const e = ssh('echo', 'never');
    const step = command({
      name: 'echo',
      version: 'v1',
      executor: e.name,
      program: 'sh',
      args: ['-c', 'printf "got %s" "$(printf %s "$HF_TOKEN" | cut -c1-12)"; sleep 1; printf "%s\\n" "$(printf %s "$HF_TOKEN" | cut -c13-)"; sleep 1.5; echo finished'],
      env: { HF_TOKEN: secret('HF_TOKEN') },
    });
    const prefix = scratch();
    const logs = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? logs(join(dir, d.name)) : d.name === 'attempt-1.stdout' ? [join(dir, d.name)] : []));
    const seen: string[] = [];
    let done = false;
    const sampling = (async () => {
      while (!done) {
        try {
          for (const l of logs(prefix)) seen.push(readFileSync(l, 'utf8'));
        } catch {
          // The staged directory was renamed into place meanwhile: the next pass reads it there.
        }
        await new Promise((r) => setTimeout(r, 25));
      }
    })();
    try {
      expect((await new StepRunner({ prefix, executors: [e], secrets: { providers: [{ type: 'file', path: file }] } }).run([step])).counts).toEqual({ succeeded: 1 });
    } finally {
      done = true;
      await sampling;
    }
    expect(seen.filter((t) => t.includes(token))).toEqual([]);
    // Streamed while it ran (before "finished"), masked as it came.
    expect(seen.some((t) => t.includes('got ***') && !t.includes('finished'))).toBe(true);
    expect(filesHolding([prefix], token)).toEqual([]);
  }, 60_000);
});
