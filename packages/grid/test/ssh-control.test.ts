/**
 * The login-node transport's multiplexing socket against a second local user, for real: a
 * loopback OpenSSH server (tools/testenv/sshd.ts) as the login node, and an attacker account
 * (`useradd`) that plants a fake ssh multiplexer where the runner used to put its socket
 * (`{tmpdir}/cairn-ssh-{pid}-%C`, guessable from `ps`). The fake speaks enough of OpenSSH's mux
 * protocol (PROTOCOL.mux) to receive a session's command line and answer "exit 0": on the old
 * code it got `env SLURM_JWT=… squeue` and forged a success. Now the socket lives in a private
 * directory (mkdtemp, 0700), and a planted control directory is refused with a typed error.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasCode } from '@cairn/core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ensureUser, OTHER_USER, runAs, sshdAvailable, startSshd, type LocalUser, type SshdInstance } from '../../../tools/testenv/sshd.js';
import { sshCommandRunner, type SshCommandRunnerOptions } from '../src/index.js';

const skip = (!sshdAvailable() || process.getuid?.() !== 0) && !process.env.CI;

/** A fake `ControlMaster` (`node -e`): answers hello and alive checks, prints each session's request, replies "exit 0". */
const FAKE_MUX = String.raw`
const net = require('node:net');
const fs = require('node:fs');
const path = process.argv[1];
const u32 = (n) => { const b = Buffer.alloc(4); b.writeUInt32BE(n >>> 0); return b; };
const msg = (...parts) => { const body = Buffer.concat(parts); return Buffer.concat([u32(body.length), body]); };
const server = net.createServer((sock) => {
  process.stdout.write('CONNECTED\n');
  sock.on('error', () => {});
  sock.write(msg(u32(0x00000001), u32(4)));
  let buf = Buffer.alloc(0);
  sock.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
      const body = buf.subarray(4, 4 + buf.readUInt32BE(0));
      buf = buf.subarray(4 + body.length);
      const type = body.readUInt32BE(0);
      if (type === 0x10000004) sock.write(msg(u32(0x80000005), u32(body.readUInt32BE(4)), u32(process.pid)));
      if (type === 0x10000002) {
        process.stdout.write('SESSION ' + JSON.stringify(body.toString('latin1')) + '\n');
        // After the client has passed its stdio descriptors: "session opened", then "exit 0" and close.
        const id = body.readUInt32BE(4);
        setTimeout(() => { sock.write(msg(u32(0x80000006), u32(id), u32(1))); sock.end(msg(u32(0x80000004), u32(1), u32(0))); }, 300);
      }
    }
  });
});
server.listen(path, () => { fs.chmodSync(path, 0o777); process.stdout.write('LISTENING\n'); });
`;

describe.skipIf(skip)('the login-node transport keeps its ssh multiplexer private', () => {
  let sshd: SshdInstance;
  let attacker: LocalUser;
  let playground: string;
  const fakes: ChildProcess[] = [];

  const options = (extra: Partial<SshCommandRunnerOptions> = {}): SshCommandRunnerOptions => ({
    host: sshd.host,
    port: sshd.port,
    user: sshd.user,
    identityFile: sshd.privateKeyPath,
    knownHostsFile: sshd.knownHostsPath,
    env: { SLURM_JWT: 'secret-jwt-of-the-victim' },
    timeoutMs: 20_000,
    ...extra,
  });

  /** Starts the attacker's fake multiplexer listening at `path`; resolves with what it has printed so far. */
  const plantFakeMux = async (path: string): Promise<() => string> => {
    const child = spawn(process.execPath, ['-e', FAKE_MUX, path], { uid: attacker.uid, gid: attacker.gid, cwd: '/', stdio: ['ignore', 'pipe', 'inherit'] });
    fakes.push(child);
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    await new Promise<void>((resolve, reject) => {
      const t = setInterval(() => {
        if (out.includes('LISTENING')) resolve(clearInterval(t));
        if (child.exitCode !== null) reject(new Error(`the fake multiplexer exited ${child.exitCode}`));
      }, 20);
    });
    return () => out;
  };

  beforeAll(async () => {
    sshd = await startSshd();
    attacker = ensureUser(OTHER_USER);
    playground = mkdtempSync(join(tmpdir(), 'cairn-ssh-control-test-'));
    chmodSync(playground, 0o1777);
  });
  afterAll(async () => {
    for (const f of fakes) f.kill('SIGKILL');
    await sshd?.stop();
    if (playground) rmSync(playground, { recursive: true, force: true });
  });

  test('a fake multiplexer at the old guessable path never sees a command, its environment, or answers for it', async () => {
    // The path the runner of this process used to take: ssh expands %C (host, port, user) itself.
    const expanded = execFileSync('ssh', ['-G', '-p', String(sshd.port), '-l', sshd.user, '-o', `ControlPath=${join(tmpdir(), `cairn-ssh-${process.pid}-%C`)}`, sshd.host], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const oldPath = /^controlpath (.+)$/m.exec(expanded)?.[1] as string;
    expect(oldPath).toContain(`cairn-ssh-${process.pid}-`);
    const seen = await plantFakeMux(oldPath);

    const runner = sshCommandRunner(options());
    let dir: string | undefined;
    try {
      const r = await runner.run(['sh', '-c', 'printf "%s:%s" "$(id -un)" "$SLURM_JWT"']);
      expect(r).toMatchObject({ code: 0, stdout: `${sshd.user}:secret-jwt-of-the-victim` });
      // A second command goes through the runner's own master, not the planted one either.
      expect(await runner.run(['sh', '-c', 'exit 3'])).toMatchObject({ code: 3 });
      expect(seen()).not.toContain('CONNECTED');
      expect(seen()).not.toContain('secret-jwt');
      // The runner's own socket directory: private to this user.
      const own = runner.controlDir;
      if (own === undefined) throw new Error('no control directory after a command');
      dir = own;
      const st = lstatSync(own);
      expect(st.isDirectory() && !st.isSymbolicLink()).toBe(true);
      expect(st.uid).toBe(process.getuid?.());
      expect(st.mode & 0o777).toBe(0o700);
      expect(() => runAs(attacker, 'ls "$1"', [own])).toThrow(/Permission denied/);
    } finally {
      await runner.close();
    }
    // close() removes the directory.
    expect(runner.controlDir).toBeUndefined();
    expect(existsSync(dir as string)).toBe(false);
  });

  test('a control directory planted by another user, made a symlink, or open to others is refused with CAIRN_UNSAFE_DIR', async () => {
    const planted = join(playground, 'theirs');
    runAs(attacker, 'mkdir -m 700 "$1"', [planted]);
    const link = join(playground, 'link');
    const mine = join(playground, 'mine');
    mkdirSync(mine, { mode: 0o700 });
    symlinkSync(mine, link);
    const open = join(playground, 'open');
    mkdirSync(open);
    chmodSync(open, 0o777);
    for (const [dir, why] of [
      [planted, /owned by uid/],
      [link, /symbolic link/],
      [open, /mode 777/],
    ] as const) {
      // The check is on the directory itself: even root (this test) refuses another user's.
      const runner = sshCommandRunner(options({ controlDir: dir }));
      const err = await runner.run(['true']).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(hasCode(err, 'CAIRN_UNSAFE_DIR'), String(err)).toBe(true);
      expect((err as Error).message).toMatch(why);
      expect((err as Error).message).toContain(dir);
      await runner.close();
    }
    // A missing one is created 0700 and kept (it is the caller's), the socket inside it.
    const fresh = join(playground, 'fresh');
    const runner = sshCommandRunner(options({ controlDir: fresh }));
    try {
      expect(await runner.run(['true'])).toMatchObject({ code: 0 });
      expect(lstatSync(fresh).mode & 0o777).toBe(0o700);
    } finally {
      await runner.close();
    }
    expect(existsSync(fresh)).toBe(true);
  });

  test('without multiplexing there is no socket and no directory', async () => {
    const runner = sshCommandRunner(options({ multiplex: false }));
    try {
      expect(await runner.run(['printf', 'x'])).toMatchObject({ code: 0, stdout: 'x' });
      expect(runner.controlDir).toBeUndefined();
    } finally {
      await runner.close();
    }
  });
});
