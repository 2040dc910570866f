import { CairnError, type Resources } from '@cairn/core';

/**
 * Executor-wide choice of where steps run on their host (`SshExecutorOptions.worker`).
 * - `auto`: small steps run in the host's persistent worker; steps that ask for GPUs or declare a
 *   long `timeLimit` (≥ {@link LONG_STEP_SECONDS}) get their own detached process.
 * - `always`: every step runs in the worker (unless its hint says otherwise).
 * - `never`: every step gets its own detached process (the worker is never started).
 */
export type WorkerMode = 'auto' | 'always' | 'never';

/** Where one step runs on its host. */
export type RunsIn =
  /** A thread of the host's persistent worker: no process start, completion pushed back at once. */
  | 'worker'
  /** Its own `setsid` process (wrapper + node): own environment and GPUs, survives a worker crash. */
  | 'detached';

/** The per-step hint (`resources.hints.sshWorker: boolean`) that overrides `auto` and `always`. */
export const WORKER_HINT = 'sshWorker';

/** A declared `timeLimit` (seconds) at or above which `auto` keeps a step out of the worker. */
export const LONG_STEP_SECONDS = 600;

/** Where a step runs, and why (for logs and docs). */
export interface RunsInChoice {
  readonly runsIn: RunsIn;
  readonly why: string;
}

const MODES: readonly WorkerMode[] = ['auto', 'always', 'never'];

/** Checks the executor option; a bad value is a `CAIRN_CONFIG` error naming the choices. */
export function checkWorkerMode(mode: unknown): WorkerMode {
  if (mode === undefined) return 'auto';
  if (typeof mode === 'string' && (MODES as readonly string[]).includes(mode)) return mode as WorkerMode;
  throw new CairnError('CAIRN_CONFIG', `createSshExecutor: \`worker\` must be one of ${MODES.map((m) => `'${m}'`).join(', ')} (got ${JSON.stringify(mode)}).`);
}

/**
 * Decides where a step runs. `never` wins over everything; then the step's hint
 * `resources.hints.sshWorker` (true or false; anything else is a `CAIRN_INVALID_SPEC` error
 * naming the step); then `always`; then `auto`'s rule: GPUs or a long `timeLimit` → detached
 * (device visibility is per process, and a long step should not share a fate with the worker),
 * else the worker.
 */
export function chooseRunsIn(step: string, resources: Resources | undefined, mode: WorkerMode): RunsInChoice {
  if (mode === 'never') return { runsIn: 'detached', why: "worker: 'never'" };
  const hint = resources?.hints?.[WORKER_HINT];
  if (hint !== undefined && typeof hint !== 'boolean') {
    throw new CairnError('CAIRN_INVALID_SPEC', `Step "${step}": resources.hints.${WORKER_HINT} must be true (run in the host's persistent worker) or false (own detached process), got ${JSON.stringify(hint)}.`, { step });
  }
  if (hint === true) return { runsIn: 'worker', why: `hints.${WORKER_HINT}: true` };
  if (hint === false) return { runsIn: 'detached', why: `hints.${WORKER_HINT}: false` };
  if (mode === 'always') return { runsIn: 'worker', why: "worker: 'always'" };
  const gpus = typeof resources?.gpus === 'object' && resources.gpus !== null ? resources.gpus.count : (resources?.gpus ?? 0);
  if (gpus > 0) return { runsIn: 'detached', why: 'asks for GPUs' };
  if (resources?.timeLimit !== undefined && resources.timeLimit >= LONG_STEP_SECONDS) return { runsIn: 'detached', why: `timeLimit ≥ ${LONG_STEP_SECONDS} s` };
  return { runsIn: 'worker', why: "worker: 'auto'" };
}
