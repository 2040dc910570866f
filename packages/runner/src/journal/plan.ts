/**
 * The plan line of a run (entry.ts's {@link JournalPlan}): its steps and their dependencies, host
 * and user. Written piece by piece, one step at a time: a 100,000-step plan built as one object
 * and one string cost its run more than all its events (bench row "journal" of
 * tools/bench/ui.bench.mjs).
 */
import { hostname, userInfo } from 'node:os';
import { computeIdentities, type StepSpec } from '@cairn/core';
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
  // The steps in core's `collectSpecs` order (depth first, dependencies first), each written as
  // the walk finishes it, when its dependencies have their indices: no index of the whole graph
  // is built first (half the plan's garbage; bench row warm-100k).
  const index = new Map<StepSpec, number>();
  const stack: StepSpec[] = [];
  const next: number[] = [];
  for (let r = 0; r < targets.length; r++) {
    const root = targets[r] as StepSpec;
    if (index.has(root)) continue;
    stack.push(root);
    next.push(0);
    while (stack.length > 0) {
      const top = stack.length - 1;
      const node = stack[top] as StepSpec;
      const deps = node.deps;
      const i = next[top] as number;
      if (i < deps.length) {
        next[top] = i + 1;
        const d = deps[i] as StepSpec;
        if (!index.has(d)) {
          stack.push(d);
          next.push(0);
        }
        continue;
      }
      stack.pop();
      next.pop();
      if (index.has(node)) continue;
      const n = index.size;
      index.set(node, n);
      let line = `${n > 0 ? ',' : ''}{"name":${jsonString(node.name)},"path":${jsonString(node.outputPath(prefix))},"deps":[`;
      for (let k = 0; k < deps.length; k++) line += `${k > 0 ? ',' : ''}${index.get(deps[k] as StepSpec) as number}`;
      put(`${line}]}`);
    }
  }
  put(']}');
}
