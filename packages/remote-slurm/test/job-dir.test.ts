/**
 * The Slurm executor (over the grid core's job directories) refuses a planted job directory
 * before anything is submitted (issue 18); a clean one gets a 0700 dir, a 0600 task, a 0700 script.
 */
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hasCode } from '@cairn/core';
import { createSlurmExecutor } from '../src/index.js';
import { jobFor, RecordingHost } from './helpers.js';

const root = mkdtempSync(join(tmpdir(), 'cairn-slurm-jobdir-'));
chmodSync(root, 0o755);
afterAll(() => rmSync(root, { recursive: true, force: true }));
const mode = (p: string) => (lstatSync(p).mode & 0o777).toString(8);

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
