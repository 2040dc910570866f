/**
 * Runs one attempt of a step from its {@link TaskPayload}, wherever the worker is (thread,
 * child process, remote host): re-imports the step function by module + export and calls it.
 */
import { mkdir } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { checkRecordable, resolveFnRef, resolveTemplate, type Resources, type StepContext, type StepLogger, type TaskPayload } from '@cairn/core';
import { revealSecrets } from '@cairn/core/internal';
import type { StepStoreAccess } from '../store/store.js';
import { localInputFor, workerStoreAccess } from './step-access.js';
import { depArtifacts } from './dep-artifacts.js';
import '../command/register.js';
import { type AttemptLogPaths, LOG_PATHS } from '../command/log-paths.js';
import { PROGRAM_USAGE_SINK, type ProgramUsageSink } from '../command/usage-sink.js';

/** Options of {@link runTask}. */
export interface RunTaskOptions {
  /** Aborted when the step must stop; handed to the step as `ctx.signal`. */
  readonly signal: AbortSignal;
  /** Where the step's `ctx.log` lines go. */
  readonly log: StepLogger;
  /** The executor client forwarded as `ctx.client`. @default undefined */
  readonly client?: unknown;
  /** Resources assigned here (e.g. with `gpuIndices`). @default task.resources */
  readonly resources?: Resources & { gpuIndices?: readonly number[] };
  /**
   * The attempt's log files, when the worker knows them: a command step's program then writes
   * its stdout and stderr straight into them. @default its output is piped to this process's stdout and stderr
   */
  readonly logPaths?: AttemptLogPaths;
  /** Receives a command step's program usage (command/usage-sink.ts). @default none: the program is not sampled on its own */
  readonly programUsage?: ProgramUsageSink;
  /** The values of the secrets the step declares, by name (filled into its inputs at the call; a missing one is CAIRN_SECRET_UNRESOLVED). @default none */
  readonly secrets?: Readonly<Record<string, string>> | undefined;
}

/**
 * Imports `task.ref`, builds the step context and calls the function: `apply` steps get
 * their resolved inputs (dependency slots → dependency paths, `OUT` → output path), `path`
 * steps get the output path. Resolves with what the function returns (checked to be plain JSON when `task.recordsResult`). A missing module or
 * export throws `CAIRN_FN_REF` naming the path tried. A local output directory is created
 * first. When the task names the store's step access (object stores), it is built here for
 * `ctx.store` and `ctx.localInput`; if it cannot be, only a step that uses them fails.
 */
export async function runTask(task: TaskPayload, options: RunTaskOptions): Promise<unknown> {
  const fn = await resolveFnRef(task.ref, undefined, task.name);
  let access: StepStoreAccess | undefined;
  let accessError: unknown;
  if (task.storeAccess !== undefined) {
    try {
      access = await workerStoreAccess(task);
    } catch (err) {
      accessError = err;
    }
  }
  const localInput = localInputFor(task.name, task.depPaths, () => {
    if (accessError !== undefined) throw accessError;
    return access;
  });
  const deps = depArtifacts({ step: task.name, depPaths: task.depPaths, depResults: task.depResults, localInput });
  const ctx: StepContext = {
    name: task.name,
    outputPath: task.outputPath,
    depPaths: task.depPaths,
    depResults: task.depResults,
    signal: options.signal,
    log: options.log,
    resources: options.resources ?? task.resources,
    attempt: task.attempt,
    ...(task.checkpointDir !== undefined ? { checkpointDir: task.checkpointDir } : {}),
    client: options.client,
    localInput,
    path: deps.path,
    resolved: deps.resolved,
  };
  if (options.logPaths !== undefined) Object.defineProperty(ctx, LOG_PATHS, { value: options.logPaths });
  if (options.programUsage !== undefined) Object.defineProperty(ctx, PROGRAM_USAGE_SINK, { value: options.programUsage });
  Object.defineProperty(ctx, 'store', {
    enumerable: true,
    get: () => {
      if (accessError !== undefined) throw accessError;
      return access?.store;
    },
  });
  if (isAbsolute(task.outputPath)) await mkdir(task.outputPath, { recursive: true });
  const value: unknown = task.kind === 'apply' ? await fn(revealSecrets(resolveTemplate(task.inputs, task.depKeys, task.outputPath, task.depPaths, task.name), options.secrets ?? {}, task.name), ctx) : await fn(task.outputPath, ctx);
  if (task.recordsResult === true) checkRecordable(task.name, value);
  return value;
}

/** Log levels of a {@link StepLogger}. */
export type LogLevel = keyof StepLogger;

/**
 * A {@link StepLogger} that formats each line as `[step] LEVEL message` (one prefix per line
 * of a multi-line message) and hands it to `write` with its level.
 */
export function lineLogger(step: string, write: (level: LogLevel, line: string) => void): StepLogger {
  const emit = (level: LogLevel) => (message: string) => {
    const tag = `[${step}] ${level.toUpperCase()} `;
    write(level, `${String(message).split('\n').map((l) => tag + l).join('\n')}\n`);
  };
  return { info: emit('info'), warn: emit('warn'), error: emit('error') };
}
