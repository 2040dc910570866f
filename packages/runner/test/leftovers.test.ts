/**
 * Nothing of a cancelled or failed attempt stays beside an output once the next run has
 * succeeded, and the local store neither writes nor reads through links (issue 27). Real
 * processes, a real full disk (a 1 MiB tmpfs), real symbolic links.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { hasCode, StepSpec } from '@cairn/core';
import { StepRunError, StepRunner } from '../src/index.js';
import { leaseFile } from '../src/store/local/layout.js';
import { markerPath, markerText } from '../src/store/marker.js';
import { Graph, memoryLogger, tempDirs } from './helpers/graph.js';
import { hang } from './fixtures/leftover-steps.mjs';

const dir = tempDirs();
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

/** What the store keeps beside outputs under `parent` that is not a lease of a live run: attempts, asides, temporary files. */
function leftovers(parent: string): string[] {
  return readdirSync(parent).filter((n) => n.includes('.cairn-attempt-') || n.includes('.cairn-old-') || n.includes('.tmp-'));
}

/** Mounts a tmpfs of `size` at a new directory; undefined where mounting is not allowed. */
function smallDisk(size: string): string | undefined {
  const at = dir();
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', at], { stdio: 'pipe' });
  } catch {
    return undefined;
  }
  cleanups.push(() => execFileSync('umount', ['-l', at]));
  return at;
}
const canMount = (() => {
  try {
    return process.getuid?.() === 0 && (existsSync('/bin/mount') || existsSync('/usr/bin/mount'));
  } catch {
    return false;
  }
})();

/** The run's summary, or the error it ended with. */
async function settled<T>(p: Promise<T>): Promise<T | Error> {
  return p.catch((err: unknown) => err as Error);
}

describe('leftovers', () => {
  it('a cancelled process step leaves no attempt directory behind, then or after the next successful run', async () => {
    const prefix = dir();
    const spec = new StepSpec({ name: 'hang', fn: hang, executor: 'process', hashAttrs: { v: 1 } });
    const controller = new AbortController();
    const running = settled(new StepRunner({ prefix, logger: memoryLogger() }).run([spec], { signal: controller.signal, handleSigint: false }));
    let pid = 0;
    for (let i = 0; i < 600 && pid === 0; i++) {
      await sleep(50);
      for (const n of leftovers(prefix)) {
        const started = join(prefix, n, 'started');
        if (existsSync(started)) pid = Number(readFileSync(started, 'utf8'));
      }
    }
    expect(pid).toBeGreaterThan(0);
    controller.abort();
    await running;
    // The worker dies after the executor's grace (SIGTERM, then SIGKILL): whatever it or its
    // executor does meanwhile must not re-create the attempt's directory.
    for (let i = 0; i < 200 && existsSync(`/proc/${pid}`); i++) await sleep(50);
    await sleep(500);
    expect(leftovers(prefix)).toEqual([]);
    process.env.CAIRN_TEST_HANG = 'no';
    cleanups.push(() => delete process.env.CAIRN_TEST_HANG);
    const summary = await new StepRunner({ prefix, logger: memoryLogger() }).run([spec], { handleSigint: false });
    expect(summary.counts).toEqual({ succeeded: 1 });
    expect(leftovers(prefix)).toEqual([]);
  }, 60_000);

  it.skipIf(!canMount)('a step that filled the disk leaves nothing holding the space: the next run succeeds, nothing beside its output', async () => {
    const disk = smallDisk('1m');
    if (disk === undefined) throw new Error('cannot mount a tmpfs as root');
    const prefix = join(disk, 'store');
    let size = 2 * 1024 * 1024;
    const g = new Graph().step('big', [], { run: (out) => writeFileSync(join(out, 'data'), Buffer.alloc(size, 1)) });
    const first = await settled(new StepRunner({ prefix, logger: memoryLogger() }).run(g.pick('big'), { handleSigint: false }));
    expect(first).toBeInstanceOf(StepRunError);
    size = 1024;
    const summary = await new StepRunner({ prefix, logger: memoryLogger() }).run(g.pick('big'), { handleSigint: false });
    expect(summary.counts).toEqual({ succeeded: 1 });
    expect(readFileSync(join(g.get('big').outputPath(prefix), 'data')).length).toBe(1024);
    expect(leftovers(prefix)).toEqual([]);
  }, 60_000);

  it.skipIf(!canMount)('a lease that cannot be written on a full disk leaves no temporary file', async () => {
    const disk = smallDisk('1m');
    if (disk === undefined) throw new Error('cannot mount a tmpfs as root');
    const prefix = join(disk, 'store');
    mkdirSync(prefix);
    // The store is already marked (an earlier run did it), so the lease is the first write that fails.
    mkdirSync(dirname(markerPath(prefix)), { recursive: true });
    writeFileSync(markerPath(prefix), markerText());
    try {
      writeFileSync(join(disk, 'filler'), Buffer.alloc(2 * 1024 * 1024, 1));
    } catch {
      // full: as intended
    }
    const g = new Graph().step('small');
    const failed = await settled(new StepRunner({ prefix, logger: memoryLogger() }).run(g.pick('small'), { handleSigint: false }));
    expect(failed).toBeInstanceOf(StepRunError);
    expect(g.calls).toEqual([]);
    expect(leftovers(prefix)).toEqual([]);
  }, 60_000);

  it("the runner taking a dead runner's lease over removes the temporary lease files it left", async () => {
    const prefix = dir();
    const g = new Graph().step('a');
    const path = g.get('a').outputPath(prefix);
    mkdirSync(prefix, { recursive: true });
    const old = Date.now() / 1000 - 3600;
    const lease = leaseFile(path);
    writeFileSync(lease, JSON.stringify({ worker_id: 'elsewhere-1-dead', timestamp: old, host: 'elsewhere', pid: 1, processStartTime: null, runId: 'dead', token: 'dead.1' }));
    // What a runner killed between writing a lease's temporary file and publishing it leaves.
    for (const tmp of [`${lease}.tmp-4242-1`, `${lease}.stale.tmp-4242-2`]) writeFileSync(tmp, '{}');
    for (const f of readdirSync(prefix)) utimesSync(join(prefix, f), old, old);
    const summary = await new StepRunner({ prefix, logger: memoryLogger() }).run(g.pick('a'), { handleSigint: false });
    expect(summary.counts).toEqual({ succeeded: 1 });
    expect(leftovers(prefix)).toEqual([]);
  }, 60_000);

  it('a parent directory swapped for a link while the step runs: the commit is refused, nothing is written where the link points', async () => {
    const prefix = dir();
    const outside = dir();
    const parent = join(prefix, 'nest', 'tok');
    let swapped = false;
    const g = new Graph().step('tok', [], {
      overrideOutputPath: 'nest/tok/v1',
      run: () => {
        // What an attacker with write access to the prefix does mid-step: move the step's parent
        // (its lease and staged attempt with it) outside and leave a link in its place.
        renameSync(parent, join(outside, 'tok'));
        symlinkSync(join(outside, 'tok'), parent);
        swapped = true;
      },
    });
    const result = await settled(new StepRunner({ prefix, logger: memoryLogger() }).run(g.pick('tok'), { handleSigint: false }));
    expect(swapped).toBe(true);
    expect(result).toBeInstanceOf(StepRunError);
    expect(hasCode((result as StepRunError).failures[0]?.error, 'CAIRN_UNSAFE_DIR')).toBe(true);
    expect(existsSync(join(outside, 'tok', 'v1'))).toBe(false);
  }, 60_000);

  it('a step directory that is a link to a built output elsewhere is not served', async () => {
    const prefix = dir();
    const elsewhere = dir();
    const g = new Graph().step('linked');
    const path = g.get('linked').outputPath(prefix);
    // A built output somewhere else, and a link to it planted at the step's directory.
    const built = join(elsewhere, 'built');
    mkdirSync(built);
    writeFileSync(join(built, '.artifact.json'), JSON.stringify({ cairn: 1, name: 'linked', nameWithHash: g.get('linked').nameWithHash, outputPath: path }));
    writeFileSync(join(built, '.executor_status'), 'SUCCESS');
    mkdirSync(prefix, { recursive: true });
    symlinkSync(built, path);
    const result = await settled(new StepRunner({ prefix, logger: memoryLogger() }).run(g.pick('linked'), { handleSigint: false }));
    expect(result).toBeInstanceOf(StepRunError);
    expect(hasCode((result as StepRunError).failures[0]?.error, 'CAIRN_UNSAFE_DIR')).toBe(true);
  }, 60_000);
});
