/**
 * Crash matrix: a pipeline mixing inline, process and SSH steps runs in a child process that
 * is SIGKILLed at seeded random moments and rerun until it completes. Invariants, checked after
 * every kill and at the end:
 * - a step that recorded SUCCESS never runs again (its execution counter does not grow);
 * - SUCCESS is never recorded over partial output (every SUCCESS `data` equals a clean run's);
 * - nothing recorded SUCCESS is lost, and the final outputs equal a clean single run's.
 */
import { describe, expect, it } from 'vitest';
import { rng, SCALE, SEED, SIZES } from './env.js';
import { counts, manifest, processesMentioning, scanStore, scratchDir, startRunner, type PipelineConfig } from './children.js';
import { record } from './metrics.js';
import { hostOptions, useRunnerSuite } from './ssh.js';

const PAUSE_MS = 30;

describe(`crash matrix (${SCALE}: ${SIZES.crashSteps} steps, ${SIZES.kills} kills, seed ${SEED})`, () => {
  const suite = useRunnerSuite();
  const cleanups = suite.cleanups;

  it('never reruns a SUCCESS step, never marks partial output SUCCESS, and ends equal to a clean run', async () => {
    const sshd = suite.sshd();
    const n = SIZES.crashSteps;
    const clean = scratchDir('cairn-rel-clean-');
    const crash = scratchDir('cairn-rel-crash-');
    cleanups.push(clean.cleanup, crash.cleanup);
    const base = { n, seed: SEED, pauseMs: PAUSE_MS, select: null } as const;

    // The reference: one uninterrupted run (no SSH needed: executors never enter identity or content).
    const ref = await startRunner({ ...base, work: clean.dir, ssh: null }).done;
    expect(ref.result, ref.output.slice(-2000)).toMatch(/^DONE /);
    const reference = new Map([...scanStore(clean.dir)].map(([k, v]) => [k, v.data]));
    expect(reference.size).toBe(n);

    const config: PipelineConfig = { ...base, work: crash.dir, ssh: sshd ? hostOptions(sshd, 'h1') : null };
    const rand = rng(SEED ^ 0x9e3779b9);
    const succeededAt = new Map<string, number>(); // step name → executions when first seen SUCCESS
    const problems: string[] = [];
    let kills = 0;
    let runs = 0;
    let orphanWorkers = 0;
    let orphanSshJobs = 0;
    let corrupt = 0;
    let lost = 0;
    let duplicates = 0;
    let names = new Map<string, string>(); // nameWithHash → name

    const check = (when: string) => {
      const dirs = scanStore(crash.dir);
      const executed = counts(crash.dir);
      for (const [nameWithHash, name] of names) {
        const d = dirs.get(nameWithHash);
        const runsSoFar = executed.get(name) ?? 0;
        if (d?.status === 'SUCCESS') {
          if (d.data !== reference.get(nameWithHash)) {
            corrupt++;
            problems.push(`${when}: ${name} is SUCCESS but its data is ${JSON.stringify(d.data)}`);
          }
          if (d.record === null || !d.record.includes('"SUCCESS"')) {
            corrupt++;
            problems.push(`${when}: ${name} is SUCCESS without a complete record`);
          }
        }
        const before = succeededAt.get(name);
        if (before !== undefined) {
          if (d?.status !== 'SUCCESS') {
            lost++;
            problems.push(`${when}: ${name} was SUCCESS and now has status ${String(d?.status)}`);
          }
          if (runsSoFar > before) {
            duplicates += runsSoFar - before;
            problems.push(`${when}: ${name} ran again after recording SUCCESS (${before} → ${runsSoFar} executions)`);
            succeededAt.set(name, runsSoFar);
          }
        } else if (d?.status === 'SUCCESS') succeededAt.set(name, runsSoFar);
      }
    };

    for (let k = 0; k < SIZES.kills; k++) {
      const remaining = n - succeededAt.size;
      if (remaining <= 1) break;
      const child = startRunner(config);
      runs++;
      const target = 1 + Math.floor(rand() * Math.max(1, Math.floor((2 * remaining) / (SIZES.kills - k + 1))));
      await child.whenStarted(target);
      // Land anywhere inside a step, including between its two writes.
      await new Promise((r) => setTimeout(r, rand() * PAUSE_MS * 1.5));
      child.proc.kill('SIGKILL');
      const r = await child.done;
      if (names.size === 0) names = new Map(manifest(crash.dir).map(([name, nwh]) => [nwh, name]));
      if (r.signal !== 'SIGKILL') {
        expect(r.result, `run ${runs} ended by itself before its kill:\n${r.output.slice(-2000)}`).toMatch(/^DONE /);
        check(`after run ${runs} (finished before the kill)`);
        break;
      }
      kills++;
      // Process workers watch their runner and cancel themselves; count those still alive 3 s
      // after the kill. SSH jobs are meant to outlive it (they are adopted): reported only.
      const deadline = Date.now() + 3000;
      while (processesMentioning(crash.dir).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      orphanWorkers += processesMentioning(crash.dir).length;
      orphanSshJobs += sshd ? processesMentioning(sshd.workDir).length : 0;
      check(`after kill ${kills} (${child.started()} steps started)`);
    }

    // Rerun until complete (one clean run must finish it), then once more: nothing may run.
    const last = await startRunner(config).done;
    runs++;
    expect(last.result, last.output.slice(-3000)).toMatch(/^DONE /);
    expect(last.code).toBe(0);
    check('after the completing run');
    const again = startRunner(config);
    const againDone = await again.done;
    runs++;
    expect(againDone.result).toMatch(/^DONE /);
    expect(again.started()).toBe(0);
    check('after a rerun of the completed pipeline');

    const finalDirs = scanStore(crash.dir);
    let missing = 0;
    for (const [nameWithHash, data] of reference) {
      const d = finalDirs.get(nameWithHash);
      if (d?.status !== 'SUCCESS' || d.data !== data) {
        missing++;
        problems.push(`final: ${nameWithHash} is ${String(d?.status)} with data ${JSON.stringify(d?.data)}`);
      }
    }
    const executed = counts(crash.dir);
    const reexecuted = [...executed.values()].filter((c) => c > 1).length;
    const byExecutor = manifest(crash.dir).reduce<Record<string, number>>((acc, [, , ex]) => ({ ...acc, [ex]: (acc[ex] ?? 0) + 1 }), {});
    record('crash', {
      steps: n,
      kills,
      runs,
      duplicateExecutions: duplicates,
      corruptOutputs: corrupt,
      lostOutputs: lost + missing,
      interruptedStepsRerun: reexecuted,
      processWorkersOutlivingKilledRunnerBy3s: orphanWorkers,
      sshJobsOutlivingKilledRunner: orphanSshJobs,
      executors: Object.entries(byExecutor).map(([e, c]) => `${e} ${c}`).join(', '),
    });
    expect(problems).toEqual([]);
    expect(kills).toBeGreaterThan(0);
    expect(orphanWorkers, 'process workers still alive 3 s after their runner was killed').toBe(0);
  });
});
