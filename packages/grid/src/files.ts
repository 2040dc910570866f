/**
 * The files a job shares with the executor, and the exit-code file's format.
 *
 * Every step attempt has its own directory (the runner's `attemptDir`) with its task, result,
 * begin marker and exit-code file, whether it runs alone or packed with others. A packed job
 * also has a pack directory (outside every step's directory: a step's output directory may be
 * renamed at its commit while the rest of its pack still runs) with the wrapper and, per task,
 * the list of its steps and its progress.
 */
import { join } from 'node:path';
import { SECRETS_FILE } from './runner-api.js';

/** Files of one step attempt, all in the attempt directory. */
export interface JobFiles {
  /** The attempt directory. */
  readonly dir: string;
  /** The wrapper script of a job that runs this step alone, or a packed command step's own script. */
  readonly script: string;
  /** The encoded task. */
  readonly task: string;
  /** The worker's result. */
  readonly result: string;
  /** Written when the step starts on a node. */
  readonly begin: string;
  /** `"<code> <signal|->"` (plus ` unstarted` for a packed step its task never started), written atomically when the step ends. */
  readonly exit: string;
  /** A command step's context file (`$CAIRN_CONTEXT`, JSON), written at submission. */
  readonly context: string;
  /** Where a command step's program may write its result (`$CAIRN_RESULT`, JSON). */
  readonly commandResult: string;
  /** `"<CAIRN_* code><TAB><message>"`: why a command job's wrapper did not start the program. */
  readonly commandError: string;
  /** A command step's declared sources as submitted, under their relative paths (the wrapper compares the project's copies with them). */
  readonly sources: string;
  /** The step's secrets (`export NAME='value'` lines, mode 0600): read and deleted by the wrapper or pack worker before the step starts. */
  readonly secrets: string;
}

/** The files of an attempt directory. */
export function jobFiles(dir: string): JobFiles {
  return {
    dir,
    script: join(dir, 'job.sh'),
    task: join(dir, 'task.msgpack'),
    result: join(dir, 'result.msgpack'),
    begin: join(dir, 'begin'),
    exit: join(dir, 'exitcode'),
    context: join(dir, 'context.json'),
    commandResult: join(dir, 'command-result.json'),
    commandError: join(dir, 'command-error'),
    sources: join(dir, 'sources'),
    secrets: join(dir, SECRETS_FILE),
  };
}

/** Files of a packed job (one job, or one job array), in its pack directory. */
export interface PackFiles {
  /** The pack directory (also where the scheduler's own output goes). */
  readonly dir: string;
  /** The wrapper script every task runs. */
  readonly script: string;
  /** Steps of task `k`: one line per step, `dir<TAB>stdout<TAB>stderr<TAB>timeLimitSeconds|-` (command packs add `<TAB>killGraceSeconds`). */
  manifest(k: number): string;
  /** Indices (0-based, one per line) of task `k`'s steps that are finished: their exit-code files are written. */
  done(k: number): string;
  /** `"<index><TAB><dir>"` of the step task `k`'s worker is running (written before the step starts). */
  current(k: number): string;
  /** Written when task `k`'s worker failed outside any step (it could not start): its exit code stands for every unfinished step. */
  taskExit(k: number): string;
  /** Written by the executor to cancel step `index` of task `k` (the pack worker watches for it). */
  cancel(k: number, index: number): string;
  /** Task `k`'s own output (the worker's, between steps). */
  log(k: number): string;
}

/** The files of a pack directory. */
export function packFiles(dir: string): PackFiles {
  return {
    dir,
    script: join(dir, 'job.sh'),
    manifest: (k) => join(dir, `task-${k}.steps`),
    done: (k) => join(dir, `task-${k}.done`),
    current: (k) => join(dir, `task-${k}.current`),
    taskExit: (k) => join(dir, `task-${k}.exit`),
    cancel: (k, index) => join(dir, `cancel-${k}-${index}`),
    log: (k) => join(dir, `task-${k}.log`),
  };
}

/** What the exit-code file says. */
export interface ExitRecord {
  /** Exit code of the worker (or of the wrapper's stand-in for it). */
  readonly code: number;
  /** The first signal the wrapper received (`USR2` = walltime warning, `TERM`…), or null. */
  readonly signal: string | null;
  /** A packed step its task stopped before starting it. */
  readonly unstarted?: boolean;
}

/** Parses the exit-code file; `undefined` when malformed. */
export function parseExitFile(text: string): ExitRecord | undefined {
  const m = /^(\d+) (\S+)( unstarted)?\s*$/.exec(text);
  if (!m) return undefined;
  const record = { code: Number(m[1]), signal: m[2] === '-' ? null : (m[2] as string) };
  return m[3] ? { ...record, unstarted: true } : record;
}

/** The exit-code file's text. */
export function formatExitFile(record: ExitRecord): string {
  return `${record.code} ${record.signal ?? '-'}${record.unstarted ? ' unstarted' : ''}\n`;
}
