/**
 * The plan line of a run (entry.ts's {@link JournalPlan}): its steps and their dependencies, host
 * and user. Written piece by piece, one step at a time: a 100,000-step plan built as one object
 * and one string cost its run more than all its events (bench row "journal" of
 * tools/bench/ui.bench.mjs).
 */
import { hostname, userInfo } from 'node:os';
import { collectSpecs, computeIdentities, type StepSpec } from '@cairn/core';
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
  put(`{"type":"plan","runId":${jsonString(runId)},"time":${Date.now()},"host":${jsonString(hostname())},"user":${jsonString(userName())},"targets":[`);
  for (let i = 0; i < targets.length; i++) put(`${i > 0 ? ',' : ''}${jsonString((targets[i] as StepSpec).name)}`);
  put('],"steps":[');
  // The steps in core's `collectSpecs` order (dependencies first), each with its dependencies'
  // indices: no CSR index of the whole graph is built (half the plan's garbage; bench row warm-100k).
  const nodes = collectSpecs(targets);
  const index = new Map<StepSpec, number>();
  for (let n = 0; n < nodes.length; n++) {
    const node = nodes[n] as StepSpec;
    index.set(node, n);
    const deps = node.deps;
    let line = `${n > 0 ? ',' : ''}{"name":${jsonString(node.name)},"path":${jsonString(node.outputPath(prefix))},"deps":[`;
    for (let k = 0; k < deps.length; k++) line += `${k > 0 ? ',' : ''}${index.get(deps[k] as StepSpec) as number}`;
    put(`${line}]}`);
  }
  put(']}');
}
