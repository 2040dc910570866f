/**
 * Slurm job directories follow the SSH work-dir rules (issue 18): created 0700, and one that
 * another user could write is refused before anything is submitted. The other user is the real
 * local user of the SSH tests' environment (`cairn-ssh-other`), who plants the directories.
 */
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hasCode } from '@cairn/core';
import { ensureUser, OTHER_USER, runAs } from '../../../tools/testenv/sshd.js';
import { createSlurmExecutor } from '../src/index.js';
import { prepareJobDir } from '../src/job-dir.js';
import { jobFor, RecordingHost } from './helpers.js';

const root = mkdtempSync(join(tmpdir(), 'cairn-slurm-jobdir-'));
chmodSync(root, 0o755);
afterAll(() => rmSync(root, { recursive: true, force: true }));
const mode = (p: string) => (lstatSync(p).mode & 0o777).toString(8);
const asRoot = process.getuid?.() === 0;

async function refusal(dir: string): Promise<Error | undefined> {
  return prepareJobDir(dir, 'train').then(
    () => undefined,
    (e: Error) => e,
  );
}

describe('prepareJobDir', () => {
  it('creates the attempt directory 0700 (its parents as usual)', async () => {
    const dir = join(root, 'fresh', 'a', '.cairn', 'attempt-1');
    await prepareJobDir(dir, 'train');
    expect(mode(dir)).toBe('700');
    await prepareJobDir(dir, 'train'); // an existing one of ours is fine
  });

  it('refuses a symlink, a file, and a group- or world-writable directory of our own', async () => {
    const target = join(root, 'elsewhere');
    mkdirSync(target);
    const link = join(root, 'link');
    symlinkSync(target, link);
    expect((await refusal(link))?.message).toMatch(/^Step "train": refusing the Slurm job directory .*link: it is a symbolic link, so someone else could change the job script or task it runs\./);
    const loose = join(root, 'loose');
    mkdirSync(loose);
    chmodSync(loose, 0o777);
    const err = await refusal(loose);
    expect(hasCode(err, 'CAIRN_UNSAFE_DIR')).toBe(true);
    expect(err?.message).toMatch(/it is writable by other users \(mode 777\)/);
    chmodSync(loose, 0o770);
    expect((await refusal(loose))?.message).toMatch(/writable by its group \(mode 770\)/);
  });

  it.runIf(asRoot)('refuses a directory another user pre-created (mode 777)', async () => {
    const other = ensureUser(OTHER_USER);
    const parent = join(root, 'shared');
    mkdirSync(parent, { mode: 0o777 });
    chmodSync(parent, 0o777);
    const dir = join(parent, 'attempt-1');
    runAs(other, 'mkdir -m 777 "$1" && chmod 777 "$1"', [dir]);
    const err = await refusal(dir);
    expect(hasCode(err, 'CAIRN_UNSAFE_DIR')).toBe(true);
    expect(err?.message).toMatch(new RegExp(`it is owned by uid ${other.uid}, not by this user \\(uid 0\\)`));
  });
});

describe('the Slurm executor refuses a planted job directory before submitting', () => {
  it('no sbatch runs, and a clean one gets a 0700 dir, a 0600 task and a 0700 script', async () => {
    const calls: string[][] = [];
    const exec = { run: async (argv: readonly string[]) => (calls.push([...argv]), { code: 0, stdout: argv[0] === 'sbatch' ? '4242\n' : '', stderr: '' }) };
    const ex = createSlurmExecutor({ exec, poll: { initialMs: 60_000, maxMs: 60_000 } });
    await ex.start(new RecordingHost(root));
    const planted = jobFor(root, 'hello');
    mkdirSync(planted.attemptDir, { recursive: true });
    chmodSync(planted.attemptDir, 0o777);
    await expect(ex.submit(planted)).rejects.toSatisfy((e) => hasCode(e, 'CAIRN_UNSAFE_DIR') && (e as Error).message.includes(planted.attemptDir));
    expect(calls.filter((c) => c[0] === 'sbatch')).toEqual([]);
    expect(existsSync(join(planted.attemptDir, 'job.sh'))).toBe(false);
    const clean = jobFor(root, 'hello');
    await ex.submit(clean);
    expect(calls.filter((c) => c[0] === 'sbatch')).toHaveLength(1);
    expect(mode(clean.attemptDir)).toBe('700');
    expect(mode(join(clean.attemptDir, 'task.msgpack'))).toBe('600');
    expect(mode(join(clean.attemptDir, 'job.sh'))).toBe('700');
    await ex.stop();
  });
});
