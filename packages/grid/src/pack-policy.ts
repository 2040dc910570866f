/**
 * The packing policy: which ready steps may share a job, and how a batch of them is cut into
 * tasks and job arrays. Pure functions (table-tested in test/pack-policy.test.ts).
 *
 * Steps share a job when they go to the same executor and have the same resource shape (CPUs,
 * memory, GPUs, hints, and whether they have a time limit). A batch of `n` such steps becomes
 * `ceil(n / stepsPerTask)` tasks of nearly equal size (a task runs its steps one after another
 * in one Node process), cut into arrays of at most `tasksPerArray` tasks. A task's time limit is
 * the sum of its steps' limits (plus {@link TASK_START_SECONDS}), at most `maxTaskSeconds`.
 */
import { CairnError, type Resources } from '@cairn/core';
import { positiveInt } from './command.js';

/** Options of packing (`pack` in the executor options). Without them every step is its own job. */
export interface PackOptions {
  /** Steps one task runs, at most. @default 25 */
  readonly stepsPerTask?: number;
  /** Tasks in one job array, at most (keep it below the cluster's `MaxArraySize` / `max_aj_tasks`). @default 500 */
  readonly tasksPerArray?: number;
  /** How long a ready step waits for others to fill its batch before the batch is submitted. @default 500 */
  readonly maxWaitMs?: number;
  /** A step with a longer time limit (seconds) runs as its own job. @default 3600 */
  readonly maxStepSeconds?: number;
  /** A packed task's time limit (the sum of its steps'), at most, in seconds. @default 14400 */
  readonly maxTaskSeconds?: number;
}

/** {@link PackOptions} with every default filled in. */
export type PackPolicy = Required<PackOptions>;

/** Seconds a packed task's time limit allows for starting its worker. */
export const TASK_START_SECONDS = 60;

/** The resource hint that keeps a step out of packs (`hints: { pack: false }`). */
export const NO_PACK_HINT = 'pack';

const positive = (name: string, value: number | undefined, fallback: number): number => positiveInt(`pack.${name}`, value, fallback);

/** Validates options and fills in defaults; throws `CAIRN_CONFIG` naming the bad field. */
export function packPolicy(options: PackOptions): PackPolicy {
  const maxWaitMs = options.maxWaitMs ?? 500;
  if (!Number.isFinite(maxWaitMs) || maxWaitMs < 0) throw new CairnError('CAIRN_CONFIG', `pack.maxWaitMs must be a number ≥ 0 (got ${String(options.maxWaitMs)}).`);
  const policy = {
    stepsPerTask: positive('stepsPerTask', options.stepsPerTask, 25),
    tasksPerArray: positive('tasksPerArray', options.tasksPerArray, 500),
    maxWaitMs,
    maxStepSeconds: positive('maxStepSeconds', options.maxStepSeconds, 3600),
    maxTaskSeconds: positive('maxTaskSeconds', options.maxTaskSeconds, 14_400),
  };
  if (policy.maxStepSeconds > policy.maxTaskSeconds) {
    throw new CairnError('CAIRN_CONFIG', `pack.maxStepSeconds (${policy.maxStepSeconds}) exceeds pack.maxTaskSeconds (${policy.maxTaskSeconds}): a step that may be packed must fit in a task.`);
  }
  return policy;
}

/** True when a step with these resources may share a job. */
export function packable(resources: Resources, policy: PackPolicy): boolean {
  if (resources.hints?.[NO_PACK_HINT] === false) return false;
  return resources.timeLimit === undefined || resources.timeLimit <= policy.maxStepSeconds;
}

/** Steps with the same key may share a job: everything but the time limit's value. */
export function shapeKey(resources: Resources): string {
  const hints = Object.entries(resources.hints ?? {})
    .filter(([k]) => k !== NO_PACK_HINT)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([resources.cpu ?? null, resources.memoryGb ?? null, resources.gpus ?? null, hints, resources.timeLimit !== undefined]);
}

/** One task's steps (indices into the batch) and its time limit in seconds (undefined: none). */
export interface PlannedTask {
  /** Indices into the batch, in order. */
  readonly steps: readonly number[];
  /** Sum of the steps' limits plus the start allowance; undefined when the steps have none. */
  readonly timeLimit: number | undefined;
}

/**
 * Cuts a batch into arrays of tasks. `limits[i]` is step i's time limit in seconds (all defined
 * or all undefined: steps of one shape). Every step lands in exactly one task, in order.
 */
export function planPacks(limits: readonly (number | undefined)[], policy: PackPolicy): PlannedTask[][] {
  const n = limits.length;
  if (n === 0) return [];
  // Nearly equal tasks: each takes its share of what is left (sizes differ by one at most).
  let tasksLeft = Math.ceil(n / policy.stepsPerTask);
  let target = Math.ceil(n / tasksLeft);
  const tasks: PlannedTask[] = [];
  let steps: number[] = [];
  let total = 0;
  const close = (next: number) => {
    if (steps.length === 0) return;
    const timed = limits[steps[0] as number] !== undefined;
    tasks.push({ steps, timeLimit: timed ? total + TASK_START_SECONDS : undefined });
    steps = [];
    total = 0;
    tasksLeft = Math.max(1, tasksLeft - 1);
    target = Math.min(policy.stepsPerTask, Math.ceil((n - next) / tasksLeft));
  };
  for (let i = 0; i < n; i++) {
    const limit = limits[i] ?? 0;
    if (steps.length >= target || (steps.length > 0 && total + limit + TASK_START_SECONDS > policy.maxTaskSeconds)) close(i);
    steps.push(i);
    total += limit;
  }
  close(n);
  const arrays: PlannedTask[][] = [];
  for (let i = 0; i < tasks.length; i += policy.tasksPerArray) arrays.push(tasks.slice(i, i + policy.tasksPerArray));
  return arrays;
}
