/**
 * A shared SSH host with another user on it (issue 18), against the real sshd of the test setup:
 * the login user `cairn-ssh-test` is the victim, the local user `cairn-ssh-other` the attacker who
 * plants directories and files. The victim's runs must refuse them or replace them, and never
 * execute planted code.
 */
import { chownSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hasCode } from '@cairn/core';
import type { JobHandle } from '@cairn/runner';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureUser, OTHER_USER, runAs, type LocalUser } from '../../../tools/testenv/sshd.js';
import { createSshExecutor, DEFAULT_WORK_DIR, type SshExecutorOptions, type SshJobInfo } from '../src/index.js';
import { alive, hostOf, jobFor, Recorder, removeScratch, scratch, sshdOrSkip, startSshd, until, workerPids, type SshdInstance } from './helpers.js';

const run = sshdOrSkip();
const info = (h: JobHandle) => h.info as unknown as SshJobInfo;
const mode = (p: string) => (lstatSync(p).mode & 0o777).toString(8);
/** The work dir a job ran under (`<workDir>/jobs/<job>`). */
const workDirOf = (h: JobHandle) => join(info(h).jobDir as string, '..', '..');

describe.runIf(run)('a shared SSH host: no code planted by another user runs as you', () => {
  let a: SshdInstance;
  let victim: LocalUser;
  let attacker: LocalUser;
  let home: string;
  /** The pre-fix default work dir: predictable, in the world-writable temp directory. */
  let oldDefault: string;
  /** Where planted code would leave its mark. */
  let canary: string;
  const made: string[] = [];

  beforeAll(async () => {
    a = await startSshd();
    victim = a.account;
    attacker = ensureUser(OTHER_USER);
    home = join(victim.home, '.cache', 'cairn');
    oldDefault = `/tmp/cairn-${victim.user}`;
    rmSync(home, { recursive: true, force: true });
    rmSync(oldDefault, { recursive: true, force: true });
    canary = scratch('cairn-canary-');
  });
  afterAll(async () => {
    const roots = [home, oldDefault, ...made];
    for (const pid of workerPids(roots)) if (alive(pid)) process.kill(pid, 'SIGKILL');
    await a?.stop();
    for (const d of roots) rmSync(d, { recursive: true, force: true });
    removeScratch();
  });

  async function executor(extra: Partial<SshExecutorOptions> = {}, host: Record<string, unknown> = { workDir: undefined }) {
    const prefix = scratch();
    const rec = new Recorder(prefix);
    const ex = createSshExecutor({ hosts: [hostOf(a, 'a', host)], pollIntervalMs: 50, ...extra });
    await ex.start(rec);
    return { ex, rec, prefix };
  }

  /**
   * Kills the victim's persistent workers, so the next step gets a fresh one (a fresh module
   * cache), and waits until their relays are gone and the executor has seen the channel close.
   */
  async function killWorkers(): Promise<void> {
    const roots = [home, oldDefault, ...made];
    for (const pid of workerPids(roots)) if (alive(pid)) process.kill(pid, 'SIGKILL');
    await until('the relays to exit', () => workerPids(roots, 'connect').length === 0);
    await new Promise((r) => setTimeout(r, 300));
  }

  /** The step bundle of the fixtures under a work dir. */
  function stepBundle(workDir: string): string {
    const dirs = readdirSync(join(workDir, 'code')).filter((d) => existsSync(join(workDir, 'code', d, 'step.mjs')));
    expect(dirs).toHaveLength(1);
    return join(workDir, 'code', dirs[0] as string, 'step.mjs');
  }

  /** Replaces `file` with planted code of exactly the same size, owned and moded as before (what a size check cannot see). */
  function plant(file: string, tag: string): void {
    const st = statSync(file);
    const marker = join(canary, `PWNED-${tag}`);
    const code = `import { writeFileSync } from 'node:fs';\nexport async function hello() { writeFileSync(${JSON.stringify(marker)}, 'planted code ran'); return 'PWNED'; }\nexport const whereAmI = hello;\n`;
    const body = Buffer.from(code.padEnd(st.size - 1, '/') + '\n');
    expect(body.length).toBe(st.size);
    writeFileSync(file, body);
    chownSync(file, st.uid, st.gid);
  }

  it('defaults to ~/.cache/cairn (0700), not the /tmp/cairn-<user> dir another user pre-created with mode 777', async () => {
    // The attacker prepares the old, predictable default work dir, world-writable.
    runAs(attacker, 'mkdir -m 777 "$1" && chmod 777 "$1"', [oldDefault]);
    const { ex, rec } = await executor({ worker: 'never' });
    const h = await ex.submit(jobFor(scratch(), 'hello'));
    expect((await rec.done(h.jobId)).state).toBe('succeeded');
    const jobDir = info(h).jobDir as string;
    expect(DEFAULT_WORK_DIR).toBe('~/.cache/cairn');
    expect(jobDir.startsWith(`${home}/jobs/`)).toBe(true);
    expect(readdirSync(oldDefault)).toEqual([]); // nothing of the victim's went there
    // Everything created remotely is the victim's alone (umask 077 / explicit modes).
    expect(mode(home)).toBe('700');
    expect(mode(join(victim.home, '.cache'))).toBe('700');
    expect(mode(join(home, 'jobs'))).toBe('700');
    expect(mode(jobDir)).toBe('700');
    for (const f of ['task.msgpack', 'stdout.log', 'stderr.log', 'result.msgpack', 'exit', 'pid']) expect(mode(join(jobDir, f)), f).toBe('600');
    const bundle = stepBundle(home);
    expect(mode(bundle)).toBe('600');
    expect(mode(join(bundle, '..'))).toBe('700');
    // The other user can read neither the task (the step's inputs) nor the logs.
    expect(() => runAs(attacker, 'cat "$1"', [join(jobDir, 'task.msgpack')])).toThrow(/Permission denied/);
    expect(() => runAs(attacker, 'ls "$1"', [home])).toThrow(/Permission denied/);
    await ex.stop();
  });

  it('a same-size bundle planted in place of the real one is replaced, not run (detached, fresh executor)', async () => {
    const first = await executor({ worker: 'never' });
    const h1 = await first.ex.submit(jobFor(scratch(), 'hello'));
    expect((await first.rec.done(h1.jobId)).state).toBe('succeeded');
    await first.ex.stop();
    const bundle = stepBundle(workDirOf(h1));
    const real = readFileSync(bundle);
    plant(bundle, 'detached');
    // A new executor (a new run): the old uploader skipped the upload because the size matched.
    const second = await executor({ worker: 'never' });
    const h2 = await second.ex.submit(jobFor(scratch(), 'hello'));
    const s2 = await second.rec.done(h2.jobId);
    expect(s2).toMatchObject({ state: 'succeeded', result: { answer: 42 } });
    expect(existsSync(join(canary, 'PWNED-detached'))).toBe(false);
    expect(readFileSync(bundle).equals(real)).toBe(true);
    await second.ex.stop();
  });

  it('a bundle replaced after this executor uploaded it is caught by the launch check and uploaded again', async () => {
    const { ex, rec } = await executor({ worker: 'never' });
    const h1 = await ex.submit(jobFor(scratch(), 'hello'));
    expect((await rec.done(h1.jobId)).state).toBe('succeeded');
    const bundle = stepBundle(workDirOf(h1));
    plant(bundle, 'launch');
    const h2 = await ex.submit(jobFor(scratch(), 'hello'));
    expect(await rec.done(h2.jobId)).toMatchObject({ state: 'succeeded', result: { answer: 42 } });
    expect(existsSync(join(canary, 'PWNED-launch'))).toBe(false);
    expect(rec.warnings.some((w) => /does not match its SHA-256 .*: not running it Uploading it again for/.test(w))).toBe(true);
    await ex.stop();
  });

  it('the persistent worker refuses a planted step bundle; the next attempt re-uploads and runs the real code', async () => {
    const first = await executor({ worker: 'always' });
    const h1 = await first.ex.submit(jobFor(scratch(), 'hello'));
    expect((await first.rec.done(h1.jobId)).state).toBe('succeeded');
    // A fresh worker (its module cache is empty), then a same-size file in place of the bundle.
    await killWorkers();
    const bundle = stepBundle(workDirOf(h1));
    plant(bundle, 'worker');
    const h2 = await first.ex.submit(jobFor(scratch(), 'hello'));
    const s2 = await first.rec.done(h2.jobId);
    expect(s2.state).toBe('lost');
    expect(s2.infrastructure).toBe(true);
    expect((s2.error as Error).message).toMatch(/the persistent worker could not start step "hello-\d+": the step bundle .*step\.mjs does not match its SHA-256 [0-9a-f]{64}; it was not run\. It is uploaded again and the step retried; nothing ran\./);
    expect(existsSync(join(canary, 'PWNED-worker'))).toBe(false);
    // The retry (the runner's, here by hand) uploads the real bundle again and runs it.
    const h3 = await first.ex.submit(jobFor(scratch(), 'hello'));
    expect(await first.rec.done(h3.jobId)).toMatchObject({ state: 'succeeded', result: { answer: 42 } });
    expect(existsSync(join(canary, 'PWNED-worker'))).toBe(false);
    await first.ex.stop();
  });

  it('a planted worker bundle (ssh-worker.mjs) is not started: it is uploaded again', async () => {
    const { ex, rec } = await executor({ worker: 'always' });
    const h1 = await ex.submit(jobFor(scratch(), 'whereAmI'));
    expect((await rec.done(h1.jobId)).state).toBe('succeeded');
    await ex.stop();
    await killWorkers();
    const code = join(workDirOf(h1), 'code');
    const dirs = readdirSync(code).filter((d) => existsSync(join(code, d, 'ssh-worker.mjs')));
    const workerBundle = join(code, dirs[0] as string, 'ssh-worker.mjs');
    const real = readFileSync(workerBundle);
    plant(workerBundle, 'ssh-worker');
    const again = await executor({ worker: 'always' });
    const h2 = await again.ex.submit(jobFor(scratch(), 'whereAmI'));
    expect((await again.rec.done(h2.jobId)).state).toBe('succeeded');
    expect(existsSync(join(canary, 'PWNED-ssh-worker'))).toBe(false);
    expect(readFileSync(workerBundle).equals(real)).toBe(true);
    await again.ex.stop();
  });

  describe('a configured work dir that is not the login user\'s alone is refused at start', () => {
    /** A fresh path in the world-writable temp dir, removed afterwards. */
    const fresh = (tag: string) => {
      const p = `/tmp/cairn-shared-${tag}-${process.pid}-${Date.now()}`;
      made.push(p);
      return p;
    };

    async function refused(workDir: string, why: RegExp): Promise<void> {
      const rec = new Recorder(scratch());
      const ex = createSshExecutor({ hosts: [hostOf(a, 'a', { workDir })], pollIntervalMs: 50 });
      let err: unknown;
      await ex.start(rec).catch((e: unknown) => {
        err = e;
      });
      await ex.stop();
      expect(hasCode(err, 'CAIRN_UNSAFE_DIR'), String(err)).toBe(true);
      const message = (err as Error).message;
      expect(message.startsWith(`SSH host "a": refusing workDir ${JSON.stringify(workDir)}: `)).toBe(true);
      expect(message).toMatch(why);
      expect(message).toMatch(/Use a directory only cairn-ssh-test can write, e\.g\. leave workDir out for ~\/\.cache\/cairn, or fix this one \(chown cairn-ssh-test, chmod 700\)\./);
      expect(existsSync(join(workDir, 'code'))).toBe(false);
    }

    it('pre-created by the other user with mode 777', async () => {
      const d = fresh('777');
      runAs(attacker, 'mkdir "$1" && chmod 777 "$1"', [d]);
      await refused(d, new RegExp(`it is owned by uid ${attacker.uid}, not by the login user \\(uid ${victim.uid}\\)`));
    });

    it("the other user's, not writable by anyone else", async () => {
      const d = fresh('755');
      runAs(attacker, 'mkdir -m 755 "$1"', [d]);
      await refused(d, /it is owned by uid \d+, not by the login user/);
    });

    it("the login user's, but writable by others or by its group", async () => {
      const o = fresh('o+w');
      runAs(victim, 'mkdir "$1" && chmod 777 "$1"', [o]);
      await refused(o, /it is writable by other users \(mode drwxrwxrwx\)/);
      const g = fresh('g+w');
      runAs(victim, 'mkdir "$1" && chmod 770 "$1"', [g]);
      await refused(g, /it is writable by its group \(mode drwxrwx---\)/);
    });

    it('a symlink the other user planted, even to a directory of the login user', async () => {
      const target = fresh('target');
      runAs(victim, 'mkdir -m 700 "$1"', [target]);
      const link = fresh('link');
      runAs(attacker, 'ln -s "$1" "$2"', [target, link]);
      await refused(link, new RegExp(`it is a symbolic link owned by uid ${attacker.uid}`));
    });

    it("inside a directory the other user owns (they could replace it)", async () => {
      const parent = fresh('parent');
      runAs(attacker, 'mkdir -m 777 "$1"', [parent]);
      const d = join(parent, 'wd');
      runAs(victim, 'mkdir -m 700 "$1"', [d]);
      await refused(d, new RegExp(`the directory above it, ${parent}, is owned by uid ${attacker.uid}`));
    });

    it("a directory of the login user's, mode 700, is used; a missing one is created 0700", async () => {
      const ok = fresh('ok');
      runAs(victim, 'mkdir -m 700 "$1"', [ok]);
      const missing = join(fresh('new'), 'deeper', 'wd');
      mkdirSync(join(missing, '..', '..'), { mode: 0o755 });
      chownSync(join(missing, '..', '..'), victim.uid, victim.gid);
      for (const workDir of [ok, missing]) {
        const { ex, rec } = await executor({ worker: 'never' }, { workDir });
        const h = await ex.submit(jobFor(scratch(), 'hello'));
        expect((await rec.done(h.jobId)).state).toBe('succeeded');
        expect(info(h).jobDir?.startsWith(`${workDir}/jobs/`)).toBe(true);
        await ex.stop();
      }
      expect(mode(missing)).toBe('700');
      expect(mode(join(missing, '..'))).toBe('700');
    });
  });

  it('a root-owned link to the login user\'s own dir is judged by its target', async () => {
    const target = `/tmp/cairn-shared-rootlink-target-${process.pid}`;
    const link = `/tmp/cairn-shared-rootlink-${process.pid}`;
    made.push(target, link);
    runAs(victim, 'mkdir -m 700 "$1"', [target]);
    symlinkSync(target, link);
    const { ex, rec } = await executor({ worker: 'never' }, { workDir: link });
    const h = await ex.submit(jobFor(scratch(), 'hello'));
    expect((await rec.done(h.jobId)).state).toBe('succeeded');
    await ex.stop();
  });
});
