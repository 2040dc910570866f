/**
 * A command step's checkpoint directory on an SSH host (issue 30), on a real sshd, both ways a
 * host sees the store: `sharedFs` (the host writes the runner's directory itself) and staged
 * (`<jobDir>/checkpoints`, filled before the program starts and copied back when the attempt
 * ends). Either way a step that checkpoints 1..5 and fails after 3 the first time is retried and
 * resumes from 3, and `$CAIRN_CHECKPOINT_DIR`, `CHECKPOINT_DIR` and the context file agree.
 */
import { readdirSync } from 'node:fs';
import { CHECKPOINT_DIR, command } from '@cairn/core';
import { StepRunner } from '@cairn/runner';
import type { Executor } from '@cairn/runner/executor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSshExecutor } from '../src/index.js';
import { hostOf, removeScratch, scratch, sshdOrSkip, startSshd, type SshdInstance } from './helpers.js';
import { ensureNoNodeUser, NO_NODE_USER } from './no-node-host.js';

const run = sshdOrSkip() && process.getuid?.() === 0;
const quiet = { info() {}, warn() {}, error() {} };

/**
 * Checkpoints 1..5 (one file each, `last` the newest), resuming after `last`; the first attempt
 * exits 7 after checkpoint 3 (and 2 when the three ways of naming the directory disagree). Its
 * result: where it started, its attempt and the directory.
 */
const TRAIN = [
  'd="$CAIRN_CHECKPOINT_DIR"',
  '[ -n "$d" ] && [ "$d" = "$1" ] && grep -q "\\"checkpointDir\\":\\"$d\\"" "$CAIRN_CONTEXT" || { echo "checkpoint dir: env=$d arg=$1" >&2; exit 2; }',
  'start=$(cat "$d/last" 2>/dev/null || echo 0)',
  'i=$((start + 1))',
  'while [ "$i" -le 5 ]; do',
  '  echo "$i" > "$d/ckpt-$i" && echo "$i" > "$d/last" || exit 3',
  '  if [ "$i" -eq 3 ] && [ "$CAIRN_ATTEMPT" = 1 ]; then echo "failing after checkpoint 3" >&2; exit 7; fi',
  '  i=$((i + 1))',
  'done',
  'printf \'{"result": {"start": %s, "attempt": %s, "dir": "%s"}}\' "$start" "$CAIRN_ATTEMPT" "$d" > "$CAIRN_RESULT"',
].join('\n');

describe.runIf(run)('checkpoints of command steps on the SSH executor', () => {
  let s: SshdInstance;
  const open: Executor[] = [];
  beforeAll(async () => {
    ensureNoNodeUser();
    s = await startSshd({ user: NO_NODE_USER });
  });
  afterAll(async () => {
    await Promise.all(open.map((e) => e.stop()));
    await s?.stop();
    removeScratch();
  });

  const train = (name: string) => command({ name, version: 'v1', executor: 'ssh', program: 'sh', args: ['-c', TRAIN, 'train', CHECKPOINT_DIR], retries: 1 });

  it.each([
    ['staged on the host and copied back (sharedFs: false)', false],
    ['written in place on a shared filesystem (sharedFs: true)', true],
  ])('a failed attempt resumes from its checkpoints: %s', async (_label, sharedFs) => {
    const prefix = scratch();
    const host = hostOf(s, 'h', { nodePath: '/nonexistent/node' });
    const e = createSshExecutor({ hosts: [host], pollIntervalMs: 50, sharedFs });
    open.push(e);
    // The login user is not the runner's (root): on the "shared filesystem" the store's
    // directories must be writable by both, as they are when one user runs both ends.
    const umask = sharedFs ? process.umask(0) : undefined;
    try {
      const runner = new StepRunner({ prefix, executors: [e], defaultExecutor: 'ssh', logger: quiet });
      const [loaded] = await runner.load([train(`train-${sharedFs ? 'shared' : 'staged'}`)], { handleSigint: false });
      const { dir, ...rest } = loaded.value as { start: number; attempt: number; dir: string };
      expect(rest).toEqual({ start: 3, attempt: 2 });
      // Shared: the store's own directory; staged: the host's copy in the job dir.
      expect(dir.startsWith(prefix)).toBe(sharedFs);
    } finally {
      if (umask !== undefined) process.umask(umask);
    }
  }, 90_000);

  it('the checkpoints a staged attempt wrote reach the runner\'s directory even when it fails', async () => {
    const prefix = scratch();
    const e = createSshExecutor({ hosts: [hostOf(s, 'h', { nodePath: '/nonexistent/node' })], pollIntervalMs: 50 });
    open.push(e);
    const step = command({ name: 'fails', version: 'v1', executor: 'ssh', program: 'sh', args: ['-c', 'echo 1 > "$CAIRN_CHECKPOINT_DIR/ckpt-1"; exit 9'], retries: 0 });
    await expect(new StepRunner({ prefix, executors: [e], defaultExecutor: 'ssh', logger: quiet }).run([step])).rejects.toThrow('exited with code 9');
    const found = (dir: string): string[] => readdirSync(dir, { withFileTypes: true, recursive: true }).filter((d) => d.isFile() && d.name === 'ckpt-1').map((d) => d.name);
    expect(found(prefix)).toEqual(['ckpt-1']);
  }, 60_000);
});
