/**
 * The CLI over ssh to a login node, for real: a loopback OpenSSH server (tools/testenv/sshd.ts)
 * as the "login node" of a real Grid Engine cell. Quoting and exit codes of `sshCommandRunner`,
 * then a step submitted, watched and finished through it (the job runs as the ssh user).
 */
import { chmodSync, chownSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { jobFor, RecordingHost, workerEntry } from '../../../tools/testenv/grid-jobs.js';
import { missingSgeBinaries, startSge, type SgeCell } from '../../../tools/testenv/sge.js';
import { sshdAvailable, startSshd, type SshdInstance } from '../../../tools/testenv/sshd.js';
import { createSgeExecutor, sshCommandRunner } from '../src/index.js';

const skip = (missingSgeBinaries().length > 0 || !sshdAvailable() || process.getuid?.() !== 0) && !process.env.CI;

describe.skipIf(skip)('Grid Engine through ssh to a login node', () => {
  let cell: SgeCell;
  let sshd: SshdInstance;
  const runners: { close(): Promise<void> }[] = [];
  const runner = (env: Record<string, string> = {}) => {
    const r = sshCommandRunner({ host: sshd.host, port: sshd.port, user: sshd.user, identityFile: sshd.privateKeyPath, knownHostsFile: sshd.knownHostsPath, env });
    runners.push(r);
    return r;
  };
  beforeAll(async () => {
    [cell, sshd] = await Promise.all([startSge({ slots: 4 }), startSshd()]);
  });
  afterAll(async () => {
    for (const r of runners) await r.close();
    await Promise.all([cell?.stop(), sshd?.stop()]);
  });

  test('arguments arrive exactly as given; exit codes and the environment come through', async () => {
    const r = runner({ CAIRN_X: "it's a b" });
    const odd = ["it's", 'a b', '$HOME', '"q"', '*', ''];
    expect(await r.run(['printf', '%s|', ...odd])).toMatchObject({ code: 0, stdout: `${odd.join('|')}|` });
    expect(await r.run(['sh', '-c', 'printf %s "$CAIRN_X"; exit 7'])).toMatchObject({ code: 7, stdout: "it's a b" });
    expect((await r.run(['no-such-command-here'])).code).toBe(127);
    const bad = sshCommandRunner({ host: '127.0.0.1', port: 9, user: sshd.user, identityFile: sshd.privateKeyPath, multiplex: false });
    await expect(bad.run(['true'])).rejects.toThrow(/ssh to 127\.0\.0\.1 failed/);
  });

  test('a step is submitted, watched and finished through the login node', async () => {
    // The job runs as the ssh user, the runner as root: they share the ssh user's group, as a
    // project group on a cluster. The store belongs to it (setgid, so new directories do too) and
    // job files are group-writable (jobAccess: 'group'), never world-writable.
    const root = join(sshd.workDir, 'store-root');
    mkdirSync(root);
    chownSync(root, 0, sshd.account.gid);
    chmodSync(root, 0o2770);
    const umask = process.umask(0o007);
    try {
      const ex = createSgeExecutor({ exec: runner(cell.env), workerEntry: workerEntry(), exitFileGraceMs: 2000, workdir: sshd.workDir, jobAccess: 'group' });
      const host = new RecordingHost(join(root, 'store'));
      await ex.start(host);
      const h = await ex.submit(jobFor(root, 'ok'));
      const s = await host.final(h.jobId);
      expect(s).toMatchObject({ state: 'succeeded', result: { answer: 42, jobId: h.info.sgeJobId } });
      expect(ex.stats.qsubCalls).toBe(1);
      expect(ex.stats.qstatCalls).toBeGreaterThan(0);
      await ex.stop();
    } finally {
      process.umask(umask);
      rmSync(root, { recursive: true, force: true });
    }
  });
});
