/**
 * Grid job directories follow the SSH work-dir rules (issue 18): created 0700, and one that
 * another user could write is refused before anything is submitted. The other user is the real
 * local user of the SSH tests' environment (`cairn-ssh-other`), who plants the directories.
 */
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hasCode } from '@cairn/core';
import { ensureUser, OTHER_USER, runAs } from '../../../tools/testenv/sshd.js';
import { createJobDir, writeJobFile } from '../src/job-dir.js';

const root = mkdtempSync(join(tmpdir(), 'cairn-slurm-jobdir-'));
chmodSync(root, 0o755);
afterAll(() => rmSync(root, { recursive: true, force: true }));
const mode = (p: string) => (lstatSync(p).mode & 0o777).toString(8);
const asRoot = process.getuid?.() === 0;

async function refusal(dir: string): Promise<Error | undefined> {
  return createJobDir(dir, 'train').then(
    () => undefined,
    (e: Error) => e,
  );
}

describe('createJobDir', () => {
  it('creates the attempt directory 0700 (its parents as usual)', async () => {
    const dir = join(root, 'fresh', 'a', '.cairn', 'attempt-1');
    await createJobDir(dir, 'train');
    expect(mode(dir)).toBe('700');
    await createJobDir(dir, 'train'); // an existing one of ours is fine
  });

  it('refuses a symlink, a file, and a group- or world-writable directory of our own', async () => {
    const target = join(root, 'elsewhere');
    mkdirSync(target);
    const link = join(root, 'link');
    symlinkSync(target, link);
    expect((await refusal(link))?.message).toMatch(/^Step "train": refusing the job directory .*link: it is a symbolic link, so someone else could change the job script or task it runs\./);
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

  it("with access 'group': directories 0770 and files 0660/0770, a group-writable one is used, a world-writable one still refused", async () => {
    const umask = process.umask(0o007);
    try {
      const dir = join(root, 'group', 'attempt-1');
      await createJobDir(dir, 'train', 'group');
      expect(mode(dir)).toBe('770');
      await writeJobFile(join(dir, 'task'), 'x', 'data', 'group');
      await writeJobFile(join(dir, 'job.sh'), '#!/bin/sh\n', 'script', 'group');
      expect([mode(join(dir, 'task')), mode(join(dir, 'job.sh'))]).toEqual(['660', '770']);
      await createJobDir(dir, 'train', 'group'); // ours, group-writable: fine
      chmodSync(dir, 0o777);
      const err = await createJobDir(dir, 'train', 'group').then(() => undefined, (e: Error) => e);
      expect(hasCode(err, 'CAIRN_UNSAFE_DIR')).toBe(true);
      expect(err?.message).toMatch(/writable by other users \(mode 777\).*mode 770\)/);
    } finally {
      process.umask(umask);
    }
  });
});
