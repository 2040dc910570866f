/**
 * A host's persistent shell (shell-channel.ts) on a real sshd: a command sent down it answers as
 * the same command's exec does; it refuses a second command while one runs; its scratch dir is
 * private and goes with it; a shell that dies or hangs mid-command fails that command with
 * CAIRN_REMOTE; nothing of a command's stdin (a launch's secrets) stays on the host. And the
 * executor launches command steps down it.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { command, lower } from '@cairn/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostConnection } from '../src/connection.js';
import { createSshExecutor } from '../src/index.js';
import { shScript } from '../src/quote.js';
import { ShellChannel } from '../src/shell-channel.js';
import { hostOf, jobForSpec, Recorder, removeScratch, scratch, sshdOrSkip, startSshd, until, type SshdInstance } from './helpers.js';

const run = sshdOrSkip() && process.getuid?.() === 0;

describe.runIf(run)('the persistent shell', () => {
  let s: SshdInstance;
  let conn: HostConnection;
  beforeAll(async () => {
    s = await startSshd({ logLevel: 'VERBOSE' });
    conn = new HostConnection(
      { name: 'h', host: s.host, port: s.port, user: s.user, privateKeyPath: s.privateKeyPath, knownHostsPath: s.knownHostsPath },
      { hostKeyVerification: true, timeoutMs: 20_000, maxChannels: 10 },
    );
  });
  afterAll(async () => {
    conn?.close();
    await s?.stop();
    removeScratch();
  });
  const shellDirs = () => readdirSync(s.workDir).filter((n) => n.startsWith('shell.'));

  it('answers a command as its exec does: output, errors, exit code, stdin', async () => {
    const shell = await ShellChannel.open(conn, s.workDir);
    try {
      const stdin = Buffer.from('first line\nsecond, ünïcode \\ and $HOME\n');
      const cases: [string, string[], Buffer | undefined][] = [
        ['printf "a\\nb\\n"; echo oops >&2; exit 3', [], undefined],
        ['cat; echo "args: $#: $1|$2"', ['x y', "it's"], stdin],
        ['printf "no newline at the end"', [], undefined],
        // A status check's log chunk: one line of 350 KB of base64, then an empty line and one with a %.
        ['head -c 262144 /dev/zero | base64 -w0; echo; echo; echo "100% done"; echo "%s \\n" >&2', [], undefined],
        ['exit 0', [], undefined],
        ['kill -TERM $$', [], undefined],
      ];
      for (const [script, args, input] of cases) {
        const cmd = shScript(script, args);
        const viaExec = await conn.exec(cmd, { stdin: input });
        const viaShell = await shell.run(cmd, input, 20_000);
        const text = (b: Buffer) => b.toString('utf8').replace(/\n?$/, '\n');
        expect({ script, out: text(viaShell.stdout), err: viaShell.stderr }).toEqual({ script, out: text(viaExec.stdout), err: viaExec.stderr });
        // exec reports a signal as null; the shell as sh does, 128 + the signal.
        expect(viaShell.code).toBe(viaExec.code ?? 143);
      }
    } finally {
      shell.close();
    }
  });

  it('refuses a second command while one runs; its scratch dir is private and removed when it closes', async () => {
    const shell = await ShellChannel.open(conn, s.workDir);
    const [dir] = shellDirs();
    expect(dir).toBeDefined();
    expect(statSync(join(s.workDir, dir as string)).mode & 0o777).toBe(0o700);
    const slow = shell.run(shScript('sleep 0.5; echo done'), undefined, 20_000);
    expect(shell.busy).toBe(true);
    await expect(shell.run(shScript('echo second'), undefined, 20_000)).rejects.toMatchObject({ code: 'CAIRN_REMOTE', message: expect.stringMatching(/busy/) });
    expect((await slow).stdout.toString()).toBe('done\n');
    expect(shell.busy).toBe(false);
    // A launch's stdin carries secrets: nothing of it stays in the scratch dir once it answered.
    expect((await shell.run(shScript('cat >/dev/null; echo read'), Buffer.from("export TOKEN='s3cret-value'\n"), 20_000)).stdout.toString()).toBe('read\n');
    for (const f of ['in', 'out', 'err']) expect(readFileSync(join(s.workDir, dir as string, f), 'utf8')).toBe('');
    shell.close();
    await until('the scratch dir is removed', () => !existsSync(join(s.workDir, dir as string)));
  });

  it('a shell killed mid-command fails the command; one that hangs past the timeout is closed', async () => {
    const shell = await ShellChannel.open(conn, s.workDir);
    let closed = false;
    shell.onClose = () => (closed = true);
    // The command kills its own server (its parent's parent: the subshell's parent).
    const killed = shell.run(shScript('kill -KILL "$(ps -o ppid= -p "$PPID" | tr -d " ")" 2>/dev/null || kill -KILL "$PPID"; sleep 5'), undefined, 20_000);
    await expect(killed).rejects.toMatchObject({ code: 'CAIRN_REMOTE' });
    expect(closed).toBe(true);
    expect(shell.up).toBe(false);
    await expect(shell.run(shScript('true'), undefined, 1000)).rejects.toMatchObject({ code: 'CAIRN_REMOTE' });

    const hung = await ShellChannel.open(conn, s.workDir);
    await expect(hung.run(shScript('sleep 30'), undefined, 300)).rejects.toMatchObject({ code: 'CAIRN_REMOTE', message: expect.stringMatching(/within 300 ms/) });
    await until('the hung shell closes', () => !hung.up);
  });

  it('the executor launches command steps and checks on them down the host shell, and closes it when it stops', async () => {
    const workDir = join(s.workDir, 'exec');
    const e = createSshExecutor({ hosts: [hostOf(s, 'h', { workDir })], pollIntervalMs: 50 });
    const prefix = scratch();
    const rec = new Recorder(prefix);
    await e.start(rec);
    const step = async (i: number) => {
      // Longer than the launch's quick wait (50 ms here): its end is learned by the status checks.
      const job = jobForSpec(prefix, lower(command({ name: `echo-${i}`, version: 'v1', executor: 'ssh', program: 'sh', args: ['-c', `sleep 0.4; echo step ${i}`] })));
      await e.submit(job);
      expect((await rec.done(job.jobKey, 60_000)).state).toBe('succeeded');
      expect(readFileSync(job.logPaths.stdout, 'utf8')).toBe(`step ${i}\n`);
    };
    await step(0); // an exec: the shell opens meanwhile (and the SFTP session the results are read over)
    await until('the host shell is open', () => readdirSync(workDir).some((n) => n.startsWith('shell.')));
    const before = sessions();
    for (let i = 1; i <= 5; i++) await step(i);
    // Five more launches, each checked on several times, and no new sshd session: all of it went down the shell.
    expect(sessions()).toBe(before);
    await e.stop();
    await until('the shell closes with the executor', () => !readdirSync(workDir).some((n) => n.startsWith('shell.')));
  });

  /** Sessions (execs, SFTP, channels) sshd has started so far (its VERBOSE log says so for each). */
  function sessions(): number {
    return s.log().split('\n').filter((l) => l.includes('Starting session:')).length;
  }
});
