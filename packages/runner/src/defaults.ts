/**
 * The runner's defaults, as data: `StepRunner` applies them, and the CLI prints them
 * (`cairn config`) and applies the same ones, so the library and the CLI never disagree.
 */
export const RUNNER_DEFAULTS = Object.freeze({
  /** Steps running at once. */
  maxConcurrent: 8,
  /** Executor of steps that name none. */
  defaultExecutor: 'inline',
  /** Rerun steps that failed in an earlier run (Marin's default). */
  forceRunFailed: true,
  /** Infrastructure failures retried per step without spending its own retries. */
  infraRetries: 3,
  /** Preempted attempts retried per step without spending its own retries (spot GPUs are preempted often). */
  preemptionRetries: 100,
  /** The wait before the attempt after a step's first preemption, doubled after each (at most 5 minutes). */
  preemptionBackoffMs: 1000,
  /** Where unpinned `apply` steps live: `{name}/{version}-{hash}`. */
  layout: 'content',
  /** A built step at a fixed path whose recipe changed is an error (not served stale). */
  onDrift: 'error',
  /** Any valid version is taken (`'calendar'` enforces Marin's `YYYY.MM.DD[.N]`, `dev`, `…-dev`). */
  versions: 'free',
  /** Each run writes its journal into the store (`{prefix}/.cairn/runs/{runId}.jsonl`: what `cairn ui` and `cairn report` read); a store that is not durable gets none unless asked. */
  journal: true,
} as const);
