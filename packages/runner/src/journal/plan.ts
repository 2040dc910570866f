/**
 * The plan line of a run (entry.ts's {@link JournalPlan}): its steps and their dependencies, host
 * and user. Written piece by piece, one step at a time: a 100,000-step plan built as one object
 * and one string cost its run more than all its events (bench row "journal" of
 * tools/bench/ui.bench.mjs).
 */
import { hostname, userInfo } from 'node:os';
import { computeIdentities, indexSpecs, type StepSpec } from '@cairn/core';
import { jsonString } from './line.js';

/** The user this process runs as; `unknown` without a passwd entry (a container's uid). */
function userName(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

/** Writes, through `put`, the plan line (without its newline) of run `runId` of `targets` and everything upstream of them under `prefix`. */
export function writePlan(put: (text: string) => void, runId: string, prefix: string, targets: readonly StepSpec[]): void {
  // Each step's path needs its identity: hashed here in one batch, not one spec at a time as the
  // loop below asks (the plan is written before discovery hashes; bench row warm-100k).
  computeIdentities(targets);
  const { nodes, graph } = indexSpecs(targets);
  put(`{"type":"plan","runId":${jsonString(runId)},"time":${Date.now()},"host":${jsonString(hostname())},"user":${jsonString(userName())},"targets":[`);
  for (let i = 0; i < targets.length; i++) put(`${i > 0 ? ',' : ''}${jsonString((targets[i] as StepSpec).name)}`);
  put('],"steps":[');
  const { offsets, deps } = graph;
  for (let i = 0; i < nodes.length; i++) {
    const s = nodes[i] as StepSpec;
    put(`${i > 0 ? ',' : ''}{"name":${jsonString(s.name)},"path":${jsonString(s.outputPath(prefix))},"deps":[${deps.subarray(offsets[i], offsets[i + 1]).join(',')}]}`);
  }
  put(']}');
}
