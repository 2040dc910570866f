/**
 * The JSON the `cairn ui` server sends its page: types only, shared by the server (src/web/)
 * and the page (web/src/), so both read one contract.
 */

/** A step's state as the page shows it: a runner's step state, or `pending` before its first event. */
export type UiStepState = string;

/** One run in the runs list. */
export interface UiRunSummary {
  /** Run id. */
  readonly runId: string;
  /** Where it was read from: the run journal `cairn run` writes, or the step records (a run made through the API: no cache hits or retries known). */
  readonly source: 'journal' | 'records';
  /** Epoch ms the run started. */
  readonly start: number;
  /** Epoch ms it ended, or of its last event while it runs. */
  readonly end: number;
  /** True until the journal has `run-finished` (a runner killed hard stays `running`; see `lastEventAgeMs`). */
  readonly running: boolean;
  /** Host and user of the runner, when the journal has its plan. */
  readonly host?: string | undefined;
  /** User of the runner. */
  readonly user?: string | undefined;
  /** Names of the run's targets. */
  readonly targets: readonly string[];
  /** Steps of the run. */
  readonly steps: number;
  /** Steps by state. */
  readonly counts: Readonly<Record<string, number>>;
  /** Journal lines that could not be read. */
  readonly corruptLines: number;
}

/** One step of a run's DAG (compact: 30,000 of these cross the wire at once). */
export interface UiStep {
  /** Step name. */
  readonly name: string;
  /** Output path relative to the prefix. */
  readonly key: string;
  /** Indices of dependencies in the run's step list. */
  readonly deps: readonly number[];
  /** Current state. */
  readonly state: UiStepState;
  /** Epoch ms of the first attempt's start. */
  readonly start?: number | undefined;
  /** Epoch ms of its final event. */
  readonly end?: number | undefined;
  /** Attempts started in this run. */
  readonly attempts: number;
}

/** A run with its DAG. */
export interface UiRun extends UiRunSummary {
  /** Store prefix. */
  readonly prefix: string;
  /** Change counter of this snapshot: the live stream sends changes after it. */
  readonly seq: number;
  /** Steps, dependencies first when the journal has the run's plan. */
  readonly stepList: readonly UiStep[];
}

/**
 * A state change pushed on the live stream: `[step index, state, attempts, start, end]`, with
 * `name, key, deps` after them for a step the viewer does not know yet.
 */
export type UiStateChange =
  | readonly [number, UiStepState, number, number | null, number | null]
  | readonly [number, UiStepState, number, number | null, number | null, string, string, readonly number[]];

/** One attempt on a step's page. */
export interface UiAttempt {
  /** 1-based. */
  readonly attempt: number;
  /** How it ended, or `running`. */
  readonly state: string;
  /** Executor, when the record tells. */
  readonly executor?: string | undefined;
  /** Host. */
  readonly host?: string | undefined;
  /** The executor's job id. */
  readonly jobId?: string | undefined;
  /** Epoch ms. */
  readonly start?: number | undefined;
  /** Epoch ms. */
  readonly end?: number | undefined;
  /** The attempt's error message. */
  readonly error?: string | undefined;
  /** What the executor measured (`usage.json`, every field it wrote); null when nothing was measured. */
  readonly usage: Readonly<Record<string, unknown>> | null;
}

/** A step's page. */
export interface UiStepDetail {
  /** Index in the run. */
  readonly index: number;
  /** Step name. */
  readonly name: string;
  /** Output path relative to the prefix. */
  readonly key: string;
  /** State in this run. */
  readonly state: UiStepState;
  /** Stored status (`SUCCESS`, `FAILED`, …), or null. */
  readonly status: string | null;
  /** The record, as stored (config, identity, dependencies, provenance); null when none. */
  readonly record: unknown;
  /** Why a stored file could not be read (a corrupt record): shown on the step. */
  readonly problem?: string | undefined;
  /** The lease while a runner holds it. */
  readonly lease: { readonly holder: unknown; readonly stale: boolean } | null;
  /** Dependencies and dependents, by index and name. */
  readonly deps: readonly { readonly index: number; readonly name: string }[];
  /** Dependents. */
  readonly dependents: readonly { readonly index: number; readonly name: string }[];
  /** Attempts. */
  readonly attempts: readonly UiAttempt[];
  /** The run's note on the step: why it rebuilt (the drift diff), which dependency failed. */
  readonly note?: string | undefined;
  /** The final error message. */
  readonly error?: string | undefined;
}

/** A log tail. */
export interface UiLog {
  /** Attempt the lines are from. */
  readonly attempt: number;
  /** Last lines (stdout, then stderr). */
  readonly lines: readonly string[];
  /** True while the attempt runs (the page polls again). */
  readonly live: boolean;
}
