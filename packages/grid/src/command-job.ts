/**
 * A command step (`cairn:command`) as a job of its own, prepared on the runner's host: the job
 * script runs the program itself, so the compute node needs neither Node nor the runner.
 *
 * Where it runs: in the step's project directory (`cwd`), which a grid executor expects on the
 * shared filesystem as it expects the store, so relative paths the program uses (undeclared data
 * files, `PYTHONPATH=../lib`) mean on the node what they mean on the runner's host. The declared
 * sources are read here, checked against the hashes the step's identity was made from and copied
 * into the attempt directory; before starting the program the wrapper compares the project's
 * copies with them (`cmp`), so a source edited while the job waited in the queue fails the step
 * (`CAIRN_COMMAND_SOURCE`) instead of running content its identity does not cover.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CairnError, COMMAND_MODULE, getBackend, resolveTemplate, type TaskPayload } from '@cairn/core';
import type { JobFiles } from './files.js';
import { writeJobFile, type JobAccess } from './job-dir.js';
import { commandArgs, commandContext, commandEnv, commandLaunch, fetchJobDeps, readTemplate, stripSecretEnv, type CommandLaunch, type StepStoreAccess } from './runner-api.js';

/** What the wrapper of a command job runs. */
export interface CommandPlan {
  /** The program: a name looked up on the node's `PATH`, or a path (relative ones from `cwd`). */
  readonly program: string;
  /** Its arguments, resolved. */
  readonly args: readonly string[];
  /** How it is started: the environment's wrapper before it, the venv or conda prefix activated (the runner's `commandLaunch`). */
  readonly launch: CommandLaunch;
  /** Variables exported for it (the step's `env` and the `CAIRN_*` context), on top of the job's environment. */
  readonly env: Readonly<Record<string, string>>;
  /** The project directory it runs in. */
  readonly cwd: string;
  /** Declared sources: path relative to `cwd` → its copy in the attempt directory. */
  readonly sources: Readonly<Record<string, string>>;
  /** Milliseconds between SIGTERM and SIGKILL to the program's processes when the wrapper stops it. */
  readonly killGraceMs: number;
  /** Exit codes that mean the program was preempted (the step's `preemptionExitCodes`). */
  readonly preemptionExitCodes: readonly number[];
}

/** Grace between SIGTERM and SIGKILL when the step sets none (as on the local executors). */
const DEFAULT_KILL_GRACE_MS = 1000;

/** True for a command step's task. */
export function isCommandTask(task: TaskPayload): boolean {
  return task.ref.module === COMMAND_MODULE;
}

/**
 * Resolves the step's template, snapshots its sources and writes its context file; throws
 * `CAIRN_COMMAND_SOURCE` for a missing or changed source. Dependencies on an object store are
 * fetched here through `store` (the job's store access) into the store's local directory, which
 * the nodes see as they see the staged output (the shared filesystem): the program gets a
 * directory, never an `s3://` URL, and the node needs no credentials.
 */
export async function prepareCommand(task: TaskPayload, files: JobFiles, access: JobAccess = 'user', store?: StepStoreAccess): Promise<CommandPlan> {
  const step = task.name;
  const depPaths = await fetchJobDeps(task.depPaths, store);
  // Secrets in its env come from the secrets file the wrapper reads (job-dir.ts), never from the script.
  const t = readTemplate(step, stripSecretEnv(resolveTemplate(task.inputs, task.depKeys, task.outputPath, depPaths, step)));
  const sources: Record<string, string> = {};
  // Read once, hashed and copied from the same bytes: the copy is exactly the content the identity covers.
  for (const [rel, want] of Object.entries(t.sources)) {
    const from = join(t.cwd, rel);
    let bytes: Buffer;
    try {
      bytes = await readFile(from);
    } catch (cause) {
      throw new CairnError('CAIRN_COMMAND_SOURCE', `Step "${step}": declared source ${rel} cannot be read at ${from} (${(cause as Error).message}); restore it, or run where the project is.`, { step, cause });
    }
    const got = getBackend().xxh64Hex(bytes);
    if (got !== want) {
      throw new CairnError('CAIRN_COMMAND_SOURCE', `Step "${step}": ${rel} changed after the pipeline was declared (content hash ${got}, declared with ${want}); run the pipeline again so its identity covers the new content.`, { step });
    }
    const copy = join(files.sources, rel);
    await mkdir(dirname(copy), { recursive: true, mode: access === 'group' ? 0o770 : 0o700 });
    await writeJobFile(copy, bytes, 'data', access);
    sources[rel] = copy;
  }
  // The scheduler assigns GPUs on the node: CUDA_VISIBLE_DEVICES is what it sets, and the context has no gpuIndices.
  // Reading task.checkpointDir opens the step's checkpoint directory (on the store, beside the output).
  const checkpointDir = task.checkpointDir;
  const attempt = { step, attempt: task.attempt, outputPath: task.outputPath, depPaths, contextPath: files.context, resultPath: files.commandResult, ...(checkpointDir === undefined ? {} : { checkpointDir }) };
  await writeJobFile(files.context, JSON.stringify(commandContext(t, attempt)), 'data', access);
  const args = commandArgs(t, attempt);
  const env = commandEnv(t, attempt);
  return { program: t.program, args, launch: commandLaunch(t, args), env, cwd: t.cwd, sources, killGraceMs: t.killGraceMs ?? DEFAULT_KILL_GRACE_MS, preemptionExitCodes: t.preemptionExitCodes ?? [] };
}
