/**
 * Concurrent runners: four runner processes start together on one store with overlapping
 * pipelines (each takes every step whose index % 4 differs from its own number, plus their
 * dependencies). Every step must run exactly once and every runner must exit 0.
 */
import { describe, expect, it } from 'vitest';
import { SEED, SIZES } from './env.js';
import { counts, manifest, scanStore, scratchDir, startRunner } from './children.js';
import { record } from './metrics.js';
import { hostOptions, useRunnerSuite } from './ssh.js';


describe(`concurrent runners (${SIZES.concurrentSteps} steps, 4 processes)`, () => {
  const suite = useRunnerSuite();
  const cleanups = suite.cleanups;

  it('runs every step exactly once and all four runners exit 0', async () => {
    const sshd = suite.sshd();
    const work = scratchDir('cairn-rel-concurrent-');
    cleanups.push(work.cleanup);
    const ssh = sshd ? hostOptions(sshd, 'h1') : null;
    const children = [0, 1, 2, 3].map((skip) =>
      startRunner({ work: work.dir, n: SIZES.concurrentSteps, seed: SEED + 1, pauseMs: 20, ssh, select: { mod: 4, skip }, maxConcurrent: 4 }),
    );
    const results = await Promise.all(children.map((c) => c.done));
    const executed = counts(work.dir);
    const steps = manifest(work.dir);
    const dirs = scanStore(work.dir);
    const wrong = steps.filter(([name]) => executed.get(name) !== 1).map(([name]) => `${name} ran ${executed.get(name) ?? 0} times`);
    const notBuilt = steps.filter(([, nwh]) => dirs.get(nwh)?.status !== 'SUCCESS' || !dirs.get(nwh)?.data?.endsWith(`END ${nwh.split('-')[0]}\n`));
    record('concurrent', {
      runners: 4,
      steps: steps.length,
      duplicateExecutions: [...executed.values()].reduce((a, c) => a + Math.max(0, c - 1), 0),
      lostOutputs: notBuilt.length,
      runnersFailed: results.filter((r) => r.code !== 0).length,
    });
    for (const r of results) expect({ code: r.code, result: r.result }, r.output.slice(-2000)).toEqual({ code: 0, result: expect.stringMatching(/^DONE /) });
    expect(wrong).toEqual([]);
    expect(notBuilt.map(([name]) => name)).toEqual([]);
  });
});
