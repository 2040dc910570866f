import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CairnError } from '@cairn/core';
import { drive } from '../src/maybe.js';
import { asyncIo, syncIo } from '../src/store/local/io.js';
import { checkStepDir } from '../src/store/local/safe-dirs.js';

const root = mkdtempSync(join(tmpdir(), 'cairn-safe-dir-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function both(prefix: string, path: string, step?: string): Promise<[CairnError | undefined, CairnError | undefined]> {
  let a: CairnError | undefined;
  let b: CairnError | undefined;
  try {
    drive(checkStepDir(syncIo, prefix, path, step));
  } catch (e) {
    a = e as CairnError;
  }
  await Promise.resolve()
    .then(() => drive(checkStepDir(asyncIo, prefix, path, step)))
    .catch((e: CairnError) => {
    b = e;
  });
  return [a, b];
}

describe('checkStepDir: the local store never follows a symlink where it expects a step directory', () => {
  const prefix = join(root, 'store');
  const outside = join(root, 'outside');
  mkdirSync(prefix, { recursive: true });
  mkdirSync(outside, { recursive: true });

  it('a planted symlink at the step directory: CAIRN_UNSAFE_DIR naming it and where it points', async () => {
    const step = join(prefix, 'train-0123456789abcdef');
    symlinkSync(outside, step);
    const [sync, async] = await both(prefix, step, 'train');
    for (const err of [sync, async]) {
      expect(err?.code).toBe('CAIRN_UNSAFE_DIR');
      expect(err?.step).toBe('train');
      expect(err?.message).toBe(`Step "train": its output directory is a symbolic link (to ${outside}); the local store does not follow links or write through other files where it expects a step directory. Remove it (or move it away) and rerun; to keep outputs elsewhere, pin the step to an absolute path.`);
    }
  });

  it('a symlinked directory on the way to a pinned step', async () => {
    symlinkSync(outside, join(prefix, 'pins'));
    const [sync, async] = await both(prefix, join(prefix, 'pins', 'tok', 'v1'), 'tok');
    expect(sync?.message).toMatch(new RegExp(`^Step "tok": ${join(prefix, 'pins')}, on the way to its output directory .*, is a symbolic link`));
    expect(async?.code).toBe('CAIRN_UNSAFE_DIR');
  });

  it('a file where the step directory should be', async () => {
    const path = join(prefix, 'file-step');
    writeFileSync(path, 'x');
    const [sync, async] = await both(prefix, path);
    expect(sync?.message).toMatch(/its output directory is not a directory/);
    expect(async?.code).toBe('CAIRN_UNSAFE_DIR');
  });

  it('real directories, missing ones, and paths outside the prefix pass', async () => {
    mkdirSync(join(prefix, 'ok', 'v1'), { recursive: true });
    expect(await both(prefix, join(prefix, 'ok', 'v1'))).toEqual([undefined, undefined]);
    expect(await both(prefix, join(prefix, 'missing', 'v1'))).toEqual([undefined, undefined]);
    expect(await both(`${prefix}/`, join(prefix, 'ok'))).toEqual([undefined, undefined]);
    // An absolute pin outside the store is the user's explicit choice, link or not.
    const link = join(root, 'abs-link');
    symlinkSync(outside, link);
    expect(await both(prefix, link)).toEqual([undefined, undefined]);
    // The prefix itself may be a link.
    const linkedPrefix = join(root, 'linked-prefix');
    symlinkSync(prefix, linkedPrefix);
    expect(await both(linkedPrefix, join(linkedPrefix, 'ok', 'v1'))).toEqual([undefined, undefined]);
    expect(existsSync(join(outside, 'ok'))).toBe(false);
  });
});
