/** The data of a run report, independent of where it was read from (run journal, records). */
import type { AttemptUsage } from '@cairn/runner';

/** How a step ended in the run. */
export type ReportOutcome =
  /** Ran and succeeded. */
  | 'succeeded'
  /** Ran and failed (after its retries). */
  | 'failed'
  /** Served from the store. */
  | 'cached'
  /** Built by another runner meanwhile. */
  | 'skipped'
  /** Not run: a dependency failed. */
  | 'dep-failed'
  /** Cancelled (Ctrl-C). */
  | 'cancelled'
  /** Still running when the report was made. */
  | 'running';

/** One attempt of a step. */
export interface ReportAttempt {
  /** 1-based. */
  readonly attempt: number;
  /** Epoch ms. */
  readonly start: number;
  /** Epoch ms. */
  readonly end: number;
  /** How it ended (`succeeded`, `failed`, `cancelled`, `timeout`, `lease-lost`, `lost`). */
  readonly state: string;
  /** Executor. */
  readonly executor: string;
  /** Host. */
  readonly host: string;
  /** Job id. */
  readonly jobId?: string | undefined;
  /** Error message. */
  readonly error?: string | undefined;
  /** CPU time (ms), where the executor measured it. */
  readonly cpuMs?: number | undefined;
  /** Peak memory (bytes), where the executor measured it. */
  readonly peakMemoryBytes?: number | undefined;
  /** What `peakMemoryBytes` is: the worker process's peak RSS, or the worker thread's V8 heap. */
  readonly memoryKind?: 'rss' | 'heap' | undefined;
  /** Exit code of the attempt's worker process (`process` and other process-based executors). */
  readonly exitCode?: number | null | undefined;
  /** Signal that ended the worker process. */
  readonly signal?: string | null | undefined;
  /** Everything the executor measured (`usage.json`: wall time, what CPU and memory cover, children, GPU); absent when nothing was. */
  readonly usage?: AttemptUsage | undefined;
}

/** One step of the run. */
export interface ReportStep {
  /** Step name. */
  readonly name: string;
  /** Output path relative to the prefix (the step's key). */
  readonly key: string;
  /** How it ended. */
  readonly outcome: ReportOutcome;
  /** Attempts that ran in this run (none for cached steps). */
  readonly attempts: readonly ReportAttempt[];
  /** The final error message, if it failed. */
  readonly error?: string | undefined;
  /** The final error's stack (with its causes), when recorded. */
  readonly errorStack?: string | undefined;
  /** Why it did not run (`dep-failed`: which dependency failed), or another note of the run. */
  readonly note?: string | undefined;
  /** Last lines of the failed attempt's logs. */
  readonly logTail?: readonly string[] | undefined;
  /** For a step served from the store: the run that built it and when it finished. */
  readonly builtBy?: { readonly runId: string; readonly end: number } | undefined;
}

/** A run. */
export interface ReportData {
  /** Run id. */
  readonly runId: string;
  /** Store prefix. */
  readonly prefix: string;
  /** Epoch ms the run started. */
  readonly start: number;
  /** Epoch ms it ended (or the last event seen). */
  readonly end: number;
  /** Where the data came from (`journal` of `cairn run`, or `records`). */
  readonly source: 'journal' | 'records';
  /** Steps. */
  readonly steps: readonly ReportStep[];
  /** Report files of other runs this one links (runs that built its cached steps), by run id. */
  readonly links?: Readonly<Record<string, string>> | undefined;
}
