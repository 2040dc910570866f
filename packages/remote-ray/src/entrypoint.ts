/**
 * What a Ray job runs for a step: its entrypoint (a shell command: Ray runs it with `sh -c`).
 *
 * A `path` / `apply` step runs through Cairn's worker entry, as the process executor runs it —
 * `node <runner>/dist/worker-entry.js --task <attemptDir>/task.msgpack --result <attemptDir>/result.msgpack` —
 * with its stdout/stderr appended to the attempt's log files, on a filesystem the Ray nodes share
 * with the runner (without one: worker-staged.ts). Before it starts, the entrypoint checks that `node` and the worker entry are
 * there, and says so on stderr (Ray's job log) with exit code 127 when they are not.
 *
 * A command step (a program: `task.ref.module === COMMAND_MODULE`) runs with a POSIX shell and
 * no Node (command-entrypoint.ts). A builder per kind in {@link ENTRYPOINTS} returns the command
 * and, when the step reports through a result file, its path.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CairnError, COMMAND_MODULE, encodeTask, type StepKind } from '@cairn/core';
import { commandStep } from './command-entrypoint.js';
import { stagedCommandStep } from './command-staged.js';
import { stagedWorkerStep } from './worker-staged.js';
import type { RayStoreCredentials } from './object-store.js';
import type { ZipEntry } from './zip.js';
import { shQuote } from './quote.js';
import { prepareSecrets } from './secrets.js';
import { workerEntryPath, type Bundler, type JobRequest } from './runner-api.js';

export { shQuote } from './quote.js';

/** A step's job, ready to submit. */
export interface JobEntrypoint {
  /** The shell command Ray runs. */
  readonly command: string;
  /** The worker's result file (`undefined`: the entrypoint's exit code is the outcome). */
  readonly resultPath?: string | undefined;
  /**
   * A command step's program: `resultPath` is then the JSON file the program may write
   * (`$CAIRN_RESULT`), and a non-zero exit is `CAIRN_COMMAND_FAILED` (see command-status.ts).
   */
  readonly program?: string | undefined;
  /** The job's `runtime_env.working_dir` (a package URI, `gcs://_ray_pkg_….zip`), when the builder delivered files with it. */
  readonly workingDir?: string | undefined;
  /** Variables for the job's `runtime_env.env_vars` (the store's credentials, `storeCredentials: 'runtime-env'` only). */
  readonly envVars?: Readonly<Record<string, string>> | undefined;
  /**
   * The job writes nothing on the runner's disk: when it ends, the runner reads Ray's job log into
   * the attempt's stdout log and the result from its marked line into `resultPath` (ray-log-result.ts).
   */
  readonly resultFromLogs?: boolean | undefined;
}

/** What a builder may use. */
export interface EntrypointContext {
  /** `node` on the Ray nodes. */
  readonly nodePath: string;
  /** The worker entry as the Ray nodes see it; `undefined`: this runner's own. */
  readonly workerEntry: string | undefined;
  /** The Ray nodes see the runner's files at the same paths. */
  readonly sharedFs: boolean;
  /** How the nodes get the store's credentials, without `sharedFs`. */
  readonly storeCredentials: RayStoreCredentials;
  /** A directory on every Ray node for a job's own files, without `sharedFs`. */
  readonly nodeTempDir: string;
  /** Uploads a working_dir package (unless the cluster has it) and resolves with its URI; without `sharedFs`. */
  readonly deliver?: ((name: string, files: readonly ZipEntry[]) => Promise<string>) | undefined;
  /** Bundles a step's module and the worker entry for the nodes; without `sharedFs`. */
  readonly bundler?: Bundler | undefined;
}

/** Builds (and prepares the files of) one step kind's entrypoint. */
export type EntrypointBuilder = (job: JobRequest, ctx: EntrypointContext) => Promise<JobEntrypoint>;

/** A step run by Cairn's worker entry (`path` and `apply` steps). */
const workerStep: EntrypointBuilder = async (job, ctx) => {
  const entry = ctx.workerEntry ?? workerEntryPath();
  const node = ctx.nodePath;
  await mkdir(job.attemptDir, { recursive: true });
  for (const p of [job.logPaths.stdout, job.logPaths.stderr]) await mkdir(join(p, '..'), { recursive: true });
  const taskPath = join(job.attemptDir, 'task.msgpack');
  const resultPath = join(job.attemptDir, 'result.msgpack');
  await rm(resultPath, { force: true });
  await writeFile(taskPath, encodeTask(job.task));
  const secrets = await prepareSecrets(job);
  const q = shQuote;
  const command = [
    ...(secrets === '' ? [] : [secrets]),
    `command -v ${q(node)} >/dev/null 2>&1 || { echo "cairn: no Node.js (${node}) on Ray node $(hostname): install Node >= 20 on every Ray node, or set the Ray executor's nodePath" >&2; exit 127; }`,
    `[ -r ${q(entry)} ] || { echo "cairn: the worker entry ${entry} is not readable on Ray node $(hostname): the Ray nodes must share the runner's filesystem (or set workerEntry to its path there)" >&2; exit 127; }`,
    `exec ${q(node)} ${q(entry)} --task ${q(taskPath)} --result ${q(resultPath)} >>${q(job.logPaths.stdout)} 2>>${q(job.logPaths.stderr)}`,
  ].join('; ');
  return { command, resultPath };
};

/**
 * Entrypoint builders by step kind. `command` is a command step (an `apply` step whose function
 * is the reserved `cairn:command`): its program runs with a POSIX shell, without Node.
 */
export const ENTRYPOINTS: Partial<Record<StepKind | 'command', EntrypointBuilder>> = {
  path: workerStep,
  apply: workerStep,
  command: commandStep,
};

/** Without `sharedFs`: the kinds whose files move with the job and through the store. */
export const STAGED_ENTRYPOINTS: Partial<Record<StepKind | 'command', EntrypointBuilder>> = {
  path: stagedWorkerStep,
  apply: stagedWorkerStep,
  command: stagedCommandStep,
};

/** The entrypoint of `job`'s step. */
export function buildEntrypoint(job: JobRequest, ctx: EntrypointContext): Promise<JobEntrypoint> {
  const kind = job.task.ref.module === COMMAND_MODULE ? 'command' : job.task.kind;
  const build = (ctx.sharedFs ? undefined : STAGED_ENTRYPOINTS[kind]) ?? ENTRYPOINTS[kind];
  if (!build) throw new CairnError('CAIRN_EXECUTOR', `Step "${job.spec.name}": the Ray executor cannot run steps of kind "${kind}" yet (it runs ${Object.keys(ENTRYPOINTS).join(', ')}).`, { step: job.spec.name });
  return build(job, ctx);
}
