/**
 * A step the executor watches, and the JSON facts its handle carries (persisted in the step's
 * job record, so a restarted runner can adopt it).
 */
import { readFile } from 'node:fs/promises';
import { jobFiles, packFiles, parseExitFile, type ExitRecord, type JobFiles, type PackFiles } from './files.js';
import type { JobHandle, JobState } from './runner-api.js';

/** Where a packed step sits in its pack. */
export interface PackPlace {
  /** The pack directory. */
  readonly dir: string;
  /** Its task (1-based; the array index). */
  readonly task: number;
  /** Its position in the task (0-based). */
  readonly index: number;
  /** Steps in its task. */
  readonly size: number;
}

/** What a grid handle's `info` holds (JSON). The scheduler's id is under the adapter's `idKey`. */
export interface GridJobRecord {
  /** Scheduler name (`slurm`, `sge`). */
  readonly scheduler: string;
  /** Transport (`cli`, `rest`). */
  readonly transport: string;
  /** The attempt directory. */
  readonly dir: string;
  /** The step's stdout log. */
  readonly stdout: string;
  /** The step's stderr log. */
  readonly stderr: string;
  /** The step's name, for messages. */
  readonly step: string;
  /** Set for a packed step. */
  readonly pack?: PackPlace;
  /** Set for a command step whose job script runs the program itself (its result is `command-result.json`, not the worker's). */
  readonly command?: CommandJob;
}

/** A command step's job: its program, and the exit codes that mean it was preempted. */
export interface CommandJob {
  /** The program, for messages. */
  readonly program: string;
  /** The step's `preemptionExitCodes` (retried from `preemptionRetries`). @default [] */
  readonly preemptionExitCodes?: readonly number[];
}

function commandOf(value: unknown): CommandJob | undefined {
  const c = value as { program?: unknown; preemptionExitCodes?: unknown } | undefined;
  if (typeof c?.program !== 'string') return undefined;
  const codes = Array.isArray(c.preemptionExitCodes) ? c.preemptionExitCodes.filter((n): n is number => Number.isInteger(n)) : [];
  return codes.length > 0 ? { program: c.program, preemptionExitCodes: codes } : { program: c.program };
}

/** A step being watched. */
export interface Tracked {
  /** Its handle. */
  readonly handle: JobHandle;
  /** The scheduler id of its job, or of its array task. */
  readonly id: string;
  /** The step's name. */
  readonly step: string;
  /** Its attempt files. */
  readonly files: JobFiles;
  /** Its log files. */
  readonly logs: { readonly stdout: string; readonly stderr: string };
  /** Set for a packed step. */
  readonly pack?: { readonly place: PackPlace; readonly files: PackFiles } | undefined;
  /** Set for a command step run by its job script (see {@link GridJobRecord.command}). */
  readonly command?: CommandJob | undefined;
  /** The step's secret values, for a job this executor submitted (masked in the lines it appends to the logs); absent for an adopted one. */
  secrets?: Readonly<Record<string, string>> | undefined;
  /** The last state reported. */
  lastState: JobState | undefined;
  /** This executor asked to cancel it. */
  cancelRequested: boolean;
  /** When it first needed the grace window (missing exit file / result / final state). */
  waitingSince: number | undefined;
}

function placeOf(value: unknown): PackPlace | undefined {
  const p = value as Partial<PackPlace> | undefined;
  if (!p || typeof p.dir !== 'string' || !Number.isInteger(p.task) || !Number.isInteger(p.index) || !Number.isInteger(p.size)) return undefined;
  return { dir: p.dir, task: p.task as number, index: p.index as number, size: p.size as number };
}

/** The tracked form of a handle; `undefined` when it is not this scheduler's (no id under `idKey`). */
export function trackedFrom(handle: JobHandle, idKey: string): Tracked | undefined {
  const i = handle.info as Partial<GridJobRecord> & Record<string, unknown>;
  const id = i[idKey];
  if (typeof id !== 'string' || typeof i.dir !== 'string' || typeof i.stdout !== 'string' || typeof i.stderr !== 'string') return undefined;
  const place = placeOf(i.pack);
  return {
    handle,
    id,
    step: typeof i.step === 'string' ? i.step : handle.jobId,
    files: jobFiles(i.dir),
    logs: { stdout: i.stdout, stderr: i.stderr },
    pack: place ? { place, files: packFiles(place.dir) } : undefined,
    command: commandOf(i.command),
    lastState: undefined,
    cancelRequested: false,
    waitingSince: undefined,
  };
}

/** The step's exit record: its own file, else (packed) its task's when the task's worker could not start. */
export async function readExit(job: Tracked): Promise<ExitRecord | undefined> {
  const own = await readFile(job.files.exit, 'utf8').catch(() => undefined);
  if (own !== undefined) return parseExitFile(own);
  if (!job.pack) return undefined;
  const task = await readFile(job.pack.files.taskExit(job.pack.place.task), 'utf8').catch(() => undefined);
  return task === undefined ? undefined : parseExitFile(task);
}
