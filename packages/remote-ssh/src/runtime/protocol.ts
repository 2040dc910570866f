/**
 * Messages of the persistent worker, as tagged unions. Types only: imported by the executor
 * (runner side) and by the worker (host side) without pulling either in.
 *
 * Executor ⇄ worker: one JSON object per line over the worker channel (an SSH exec channel
 * whose remote end is the relay, `ssh-worker.mjs connect`, piped to the worker's unix socket).
 * Worker main ⇄ step thread: `worker_threads` messages.
 */

/** Version of the line protocol; the worker says it in `hello`. */
export const WORKER_PROTOCOL = 2;

/** Executor → worker. */
export type ToWorker =
  /** Runs one step: the worker writes the job dir (task, pid, logs, result, exit) as the detached wrapper does. */
  | {
      readonly t: 'run';
      /** Absolute job dir on the host. */
      readonly dir: string;
      /** Step name, for messages. */
      readonly step: string;
      /** `encodeTask` bytes, base64. */
      readonly task: string;
      /** The step bundle the task's `ref.module` points at (absolute path on the host). */
      readonly code: string;
      /** Its SHA-256 (hex): the worker checks the file against it before the step runs, and refuses a mismatch. */
      readonly sha256: string;
      /** `CUDA_VISIBLE_DEVICES` for the step (empty for none). */
      readonly cuda: string;
      /** Outputs are staged back: list and hash `<dir>/out` in `done` after success. */
      readonly manifest: boolean;
      /**
       * The step is cancelled (as by `cancel`, with `killGraceMs`) once its job dir's `heartbeat`,
       * touched by the status checks of a runner tracking it, is older than this: its runner is
       * gone for good. Absent: never.
       */
      readonly orphanGraceMs?: number;
      /** The cancel grace the watchdog uses. @default 5000 */
      readonly killGraceMs?: number;
      /** The step's secrets by name: over the channel and into the step's thread in memory only, never written. Absent: none. */
      readonly secrets?: Readonly<Record<string, string>>;
    }
  /**
   * Cancels running steps (no-op for ended ones). On the channel that sent the `run`, so it can
   * never overtake it; adopted steps are cancelled with a `cancel` file and SIGUSR2 instead.
   */
  | { readonly t: 'cancel'; readonly dirs: readonly string[]; readonly graceMs: number }
  /** Removes directories (staged copies of finished jobs). */
  | { readonly t: 'cleanup'; readonly dirs: readonly string[] };

/** Worker → executor. Completions go to every connected executor; each ignores job dirs it does not track. */
export type FromWorker =
  /** First line on a connection. */
  | { readonly t: 'hello'; readonly pid: number; readonly protocol: number }
  /** A step ended; its `exit` file is written. */
  | {
      readonly t: 'done';
      readonly dir: string;
      /** The exit code also in the `exit` file (0 ok, 1 failed, 143 cancelled, else the step's `process.exit` code). */
      readonly code: number;
      /** `result.msgpack` bytes, base64 (absent when the step left no result). */
      readonly result?: string;
      /** What the step used (`usage.json`, also in the job dir): thread CPU plus its subprocesses', heap, their peak RSS. */
      readonly usage?: Readonly<Record<string, unknown>>;
      /** The logs, base64, when each is small (else the executor reads the files). */
      readonly stdout?: string;
      readonly stderr?: string;
      /** With `manifest`, after exit 0: the output dir's listing (absent when too large). */
      readonly out?: OutputListing;
    }
  /**
   * A `run` that could not start (bad job dir, unwritable work dir, or `codeMismatch`: the step
   * bundle on disk does not match `sha256`). Nothing runs.
   */
  | { readonly t: 'rejected'; readonly dir: string; readonly message: string; readonly codeMismatch?: boolean };

/** A directory tree as relative paths, with each regular file's size and SHA-256 (what staging verifies). */
export interface OutputListing {
  readonly dirs: readonly string[];
  readonly files: readonly { readonly path: string; readonly size: number; readonly sha256: string }[];
}

/** Worker main → step thread. */
export type ToThread =
  /** Runs one step; the thread appends its output to the log files. */
  | { readonly t: 'run'; readonly dir: string; readonly task: Uint8Array; readonly cuda: string; readonly stdout: string; readonly stderr: string; readonly secrets?: Readonly<Record<string, string>> }
  /** Aborts the running step's `ctx.signal` (cancel). */
  | { readonly t: 'abort'; readonly message: string };

/** Step thread → worker main. */
export type FromThread = {
  readonly t: 'done';
  readonly result: Uint8Array;
  readonly ok: boolean;
  /** CPU time the thread used for the step (ms; Linux), when known. */
  readonly cpuMs?: number;
  /** The thread's V8 heap at the end of the step (bytes). */
  readonly heapBytes?: number;
};

/** Exit code of the relay when the worker's socket does not answer (it exited, idle, meanwhile): connect again. */
export const RELAY_NO_WORKER = 75;
