/**
 * Prints the reliability summary when the run ends and writes it to
 * `.test-results/reliability-summary.txt`: kills survived, duplicate executions, lost or
 * corrupted outputs, bad inputs and typed errors, fault outcomes, peak memory.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';
import { METRICS_DIR } from './test/metrics.js';

type Section = Record<string, number | string | boolean>;

function load(): Record<string, Section> {
  const out: Record<string, Section> = {};
  if (!existsSync(METRICS_DIR)) return out;
  for (const f of readdirSync(METRICS_DIR)) if (f.endsWith('.json')) out[f.slice(0, -5)] = JSON.parse(readFileSync(join(METRICS_DIR, f), 'utf8')) as Section;
  return out;
}

const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

/** The summary text (exported for reuse by scripts). */
export function summarize(sections: Record<string, Section>, failedTests: number): string {
  const crash = sections.crash ?? {};
  const conc = sections.concurrent ?? {};
  const fuzz = sections.fuzz ?? {};
  const s3 = sections.s3 ?? {};
  const lines = [
    `Cairn reliability summary (RELIABILITY_SCALE=${process.env.RELIABILITY_SCALE ?? 'default'}, seed ${process.env.RELIABILITY_SEED ?? 'default'})`,
    `  kills survived:              ${num(crash.kills)} SIGKILLs over ${num(crash.runs)} runs of a ${num(crash.steps)}-step pipeline (${String(crash.executors ?? 'not run')})`,
    `  duplicate executions:        ${num(crash.duplicateExecutions) + num(conc.duplicateExecutions) + num(s3.duplicateExecutions)} (must be 0; crash ${num(crash.duplicateExecutions)}, 4 concurrent runners ${num(conc.duplicateExecutions)}, s3 ${num(s3.duplicateExecutions)})`,
    `  lost or corrupted outputs:   ${num(crash.lostOutputs) + num(crash.corruptOutputs) + num(conc.lostOutputs) + num(s3.lostOutputs)} (must be 0)`,
    `  interrupted steps rerun:     ${num(crash.interruptedStepsRerun)} (allowed: they never recorded SUCCESS)`,
    `  workers alive 3 s after their runner was killed: process ${num(crash.processWorkersOutlivingKilledRunnerBy3s)} (must be 0), ssh ${num(crash.sshJobsOutlivingKilledRunner)} (kept for adoption)`,
    `  bad inputs tried:            ${num(fuzz.badInputsTried)}, typed CairnError: ${num(fuzz.typedErrors)} (must be all)${fuzz.firstUntyped ? `; first untyped: ${String(fuzz.firstUntyped)}` : ''}`,
    `  public inputs tried:         ${num(fuzz.publicTried)} (names, versions, pins, overrides, prefixes, maxConcurrent, pools, executor names, resources, option keys): typed ${num(fuzz.publicTyped)}, accepted valid ${num(fuzz.publicAccepted)}, crashed ${num(fuzz.publicCrashed)} (must be 0), silently accepted ${num(fuzz.publicSilentlyAccepted)} (must be 0)${fuzz.firstPublicProblem ? `; first: ${String(fuzz.firstPublicProblem)}` : ''}`,
  ];
  for (const store of ['memory', 'null']) {
    const s = sections[`soak-${store}`];
    if (s) lines.push(`  peak memory (${store} store):  ${num(s.peakRssMiB)} MiB for ${num(s.steps).toLocaleString('en')} steps in ${num(s.seconds)} s = ${num(s.peakBytesPerStep)} B/step peak, ${num(s.retainedBytesPerStep)} B/step retained`);
  }
  const leases = sections.leases ?? {};
  if (Object.keys(leases).length) lines.push('  leases and commits:', ...Object.entries(leases).map(([k, v]) => `    ${k}: ${String(v)}`));
  const s3Cases = Object.entries(s3).filter(([k]) => k !== 'duplicateExecutions' && k !== 'lostOutputs');
  if (s3Cases.length) lines.push('  s3 store (Ceph RADOS Gateway):', ...s3Cases.map(([k, v]) => `    ${k}: ${String(v)}`));
  const faults = sections.faults ?? {};
  if (Object.keys(faults).length) lines.push('  faults:', ...Object.entries(faults).map(([k, v]) => `    ${k}: ${String(v)}`));
  lines.push(`  failed tests: ${failedTests}`);
  return `${lines.join('\n')}\n`;
}

/** The vitest reporter. */
export default class ReliabilitySummary implements Reporter {
  onInit(): void {
    rmSync(METRICS_DIR, { recursive: true, force: true });
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let failed = 0;
    for (const m of testModules) for (const t of m.children.allTests()) if (t.result().state === 'failed') failed++;
    const text = summarize(load(), failed);
    const file = join(METRICS_DIR, '..', 'reliability-summary.txt');
    mkdirSync(join(METRICS_DIR, '..'), { recursive: true });
    writeFileSync(file, text);
    process.stdout.write(`\n${text}(written to ${file})\n`);
  }
}
