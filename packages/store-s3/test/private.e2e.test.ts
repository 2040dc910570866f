/**
 * No guessable paths in a shared temp directory: staged attempts live in this user's private
 * directory (`{tmpdir}/cairn-s3-{uid}`, 0700, owner checked). A real second local user (created
 * with `useradd`) who tries to read a running step's staged files gets nothing; one who creates
 * the path first (a directory open to them, or a symlink) makes the store refuse with
 * CAIRN_UNSAFE_DIR before the step runs, so nothing of theirs is uploaded. Against a real RADOS
 * Gateway; needs root (to create the user), as CI runs.
 */
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StepSpec } from '@cairn/core';
import { StepRunner } from '@cairn/runner';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureUser, OTHER_USER, runAs, type LocalUser } from '../../../tools/testenv/sshd.js';
import { S3Store } from '../src/index.js';
import { clientOptions, freshPrefix, haveRgw, useGateway } from './helpers.js';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const isRoot = process.getuid?.() === 0;
const SECRET = 'the victim staged this';

describe.skipIf(!haveRgw || !isRoot)('staging in a private directory: a second local user reads nothing and plants nothing', () => {
  const gw = useGateway();
  const tmp = mkdtempSync(join(tmpdir(), 'cairn-s3-private-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));
  let mallory: LocalUser;

  /** A fresh world-writable sticky directory, as /tmp is, used as the store's TMPDIR. */
  function sharedTmp(): string {
    const dir = mkdtempSync(join(tmp, 'shared-'));
    chmodSync(tmp, 0o755);
    chmodSync(dir, 0o1777);
    return dir;
  }

  /** An S3 store built with TMPDIR = `shared` (its default staging root comes from it). */
  function storeIn(shared: string): S3Store {
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = shared;
    try {
      return new S3Store(clientOptions(gw.get()));
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
  }

  /**
   * A step that stages a secret, and while it runs lets the other user try everything they can
   * in `shared`: read any file named secret.txt, and swap the step's staged directory for their
   * own holding a planted file.
   */
  function victimStep(shared: string, seen: { read?: string; swapped?: string }) {
    return new StepSpec({
      name: 'victim',
      hashAttrs: { shared },
      fn: (out: string) => {
        writeFileSync(join(out, 'secret.txt'), SECRET);
        seen.read = runAs(mallory, 'find "$1" -name secret.txt -exec cat {} + 2>/dev/null; true', [shared]);
        seen.swapped = runAs(mallory, 'mv "$1" "$1.victim" 2>/dev/null && mkdir -m 777 "$1" && echo planted > "$1/planted.txt" && echo swapped; true', [out]);
      },
    });
  }

  /** The names of the objects under the step's output path (any prefix). */
  async function objectsOf(store: S3Store, url: string): Promise<string[]> {
    const { bucket, key } = store.s3.locate(url);
    const page = await store.s3.objects.list(bucket, { prefix: `${key}/` });
    return page.objects.map((o) => o.key.slice(o.key.lastIndexOf('/') + 1));
  }

  it('nothing planted: the step runs in a 0700 directory of its own; the other user reads nothing and plants nothing', async () => {
    mallory = ensureUser(OTHER_USER);
    const shared = sharedTmp();
    const store = storeIn(shared);
    const prefix = freshPrefix(gw.get(), 'private');
    const seen: { read?: string; swapped?: string } = {};
    const step = victimStep(shared, seen);
    expect((await new StepRunner({ prefix, store, logger: quiet }).run([step])).counts).toEqual({ succeeded: 1 });
    expect(seen.read).not.toContain(SECRET);
    expect(seen.swapped).not.toContain('swapped');
    const root = join(shared, `cairn-s3-${process.getuid?.()}`);
    const st = lstatSync(root);
    expect(st.isDirectory() && st.uid === process.getuid?.() && (st.mode & 0o777) === 0o700).toBe(true);
    const names = await objectsOf(store, step.outputPath(prefix));
    expect(names).toContain('secret.txt');
    expect(names).not.toContain('planted.txt');
    store.s3.destroy();
  });

  it.each([
    ['a directory open to them', 'mkdir -m 777 "$1" && mkdir -m 777 "$1/attempts" && echo planted > "$1/attempts/planted.txt"'],
    ['a symlink to their directory', 'mkdir -m 777 "$2" && ln -s "$2" "$1"'],
  ])('the other user created the path first (%s): refused with CAIRN_UNSAFE_DIR before the step runs; nothing uploaded, nothing read', async (_what, plant) => {
    mallory = ensureUser(OTHER_USER);
    const shared = sharedTmp();
    const root = join(shared, `cairn-s3-${process.getuid?.()}`);
    // The guessable paths, of this layout and of the one before it.
    for (const p of [root, join(shared, 'cairn-s3-attempts')]) runAs(mallory, plant, [p, `${p}.theirs`]);
    const store = storeIn(shared);
    const prefix = freshPrefix(gw.get(), 'planted');
    const seen: { read?: string; swapped?: string } = {};
    const step = victimStep(shared, seen);
    const err = await new StepRunner({ prefix, store, logger: quiet }).run([step]).catch((e: unknown) => e);
    const failure = (err as { failures?: { step: string; error: { code: string; message: string } }[] }).failures?.[0];
    expect(failure?.error.code).toBe('CAIRN_UNSAFE_DIR');
    expect(failure?.error.message).toContain(`Refusing the staging directory ${root}: it `);
    expect(seen).toEqual({}); // the step never ran
    expect(await objectsOf(store, step.outputPath(prefix))).not.toContain('planted.txt');
    expect(await objectsOf(store, step.outputPath(prefix))).not.toContain('secret.txt');
    expect(runAs(mallory, 'find "$1" -name secret.txt 2>/dev/null; true', [shared])).toBe('');
    expect(existsSync(join(root, 'attempts', 'planted.txt')) || !existsSync(join(root, 'attempts'))).toBe(true); // left as found, never used
    store.s3.destroy();
  });

  it('a root the user chose is checked too: another user\'s directory, or one others can write, is refused', async () => {
    mallory = ensureUser(OTHER_USER);
    const theirs = join(sharedTmp(), 'theirs');
    runAs(mallory, 'mkdir -m 755 "$1"', [theirs]);
    const open = join(sharedTmp(), 'open');
    mkdirSync(open);
    chmodSync(open, 0o777);
    for (const localRoot of [theirs, open]) {
      const store = new S3Store({ ...clientOptions(gw.get()), localRoot });
      const err = await store.stage(`${freshPrefix(gw.get())}/x-1`, { worker_id: 'w', timestamp: 0, host: 'h', pid: 1, processStartTime: null, runId: 'r', token: 't' }, 1).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'CAIRN_UNSAFE_DIR', message: expect.stringContaining(`Refusing the staging directory ${localRoot}: it `) });
      store.s3.destroy();
    }
  });
});
