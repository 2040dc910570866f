/**
 * Types-only contract of command steps: what a command step's inputs template holds once a
 * worker resolved it (dependency slots → their output paths, `OUT` → the step's own). Remote
 * executors build on this shape; importing this file pulls in no runtime code.
 */

/** Context values known only when an attempt runs: the attempt number, the step's checkpoint directory. */
export type CommandContextName = 'attempt' | 'checkpointDir';

/** A context placeholder as it travels in a template: `{ "$context": "attempt" }`. */
export interface CommandContextMarker {
  /** Which context value goes here (a decimal string for `attempt`, an absolute path for `checkpointDir`). */
  readonly $context: CommandContextName;
}

/** One argument or environment value of a resolved template. */
export type CommandValue = string | CommandContextMarker;

/**
 * A command step's inputs template, resolved (the `inputs` a worker hands the reserved
 * `cairn:command` runner). Every key but `cwd`, `runtime` and `killGraceMs` is hashed into the
 * step's identity (the last three are `apply` runtime arguments).
 */
export interface CommandTemplate {
  /** Format of this template. */
  readonly $command: 1;
  /** The program: a name looked up on `PATH`, or a path (relative ones from `cwd`). */
  readonly program: string;
  /** Its arguments (no shell: each is one argv entry). */
  readonly args: readonly CommandValue[];
  /** Environment variables set for it, on top of the worker's own. */
  readonly env: Readonly<Record<string, CommandValue>>;
  /** Declared sources: path relative to `cwd` (forward slashes) → XXH64 of the content (16 hex digits). */
  readonly sources: Readonly<Record<string, string>>;
  /** The step's inputs as declared, resolved (dependencies → output paths, `OUT` → output path). */
  readonly inputs: Readonly<Record<string, unknown>>;
  /** Where the program runs and relative sources live: the project directory (absolute, this host's). */
  readonly cwd: string;
  /** Runtime values (never hashed), handed to the program in its context file. */
  readonly runtime: Readonly<Record<string, unknown>>;
  /** Milliseconds between SIGTERM and SIGKILL to the program's process group when it must stop. */
  readonly killGraceMs?: number;
  /** Exit codes that mean the program was preempted (retried from `preemptionRetries`, not `retries`). */
  readonly preemptionExitCodes?: readonly number[];
  /** Keep the step's checkpoint directory after it succeeds (else it is removed with the commit). */
  readonly keepCheckpoints?: boolean;
  /** Preempted attempts retried without spending `retries` (overrides the runner's `preemptionRetries`). */
  readonly preemptionRetries?: number;
  /** Where the program's environment comes from (a venv, a conda prefix, a wrapper command); never hashed: a location, not content. */
  readonly environment?: CommandEnvironmentTemplate;
}

/**
 * A command step's environment as it travels in its template: paths absolute (this host's), the
 * lock files already hashed into `sources`. Activating one is what `source bin/activate` does:
 * its `bin/` first on `PATH`, `VIRTUAL_ENV` (or `CONDA_PREFIX`) set, `PYTHONHOME` unset.
 */
export interface CommandEnvironmentTemplate {
  /** A Python virtual environment's directory (absolute). */
  readonly venv?: string;
  /** A conda environment's prefix directory (absolute). */
  readonly conda?: string;
  /** Words put before the program on its command line (`srun`, `apptainer exec image.sif`). */
  readonly wrap?: readonly string[];
}

/** The context file a program finds at `$CAIRN_CONTEXT` (JSON). */
export interface CommandContextFile {
  /** Format version. */
  readonly cairn: 1;
  /** The step's name. */
  readonly step: string;
  /** 1-based attempt number. */
  readonly attempt: number;
  /** Where the program writes its output (absolute path, or a URL on an object store). */
  readonly outputPath: string;
  /** The step's inputs, resolved: dependency handles are their output paths, `OUT` the output path. */
  readonly inputs: Readonly<Record<string, unknown>>;
  /** Runtime values (not part of identity). */
  readonly runtime: Readonly<Record<string, unknown>>;
  /** Dependencies' output paths, keyed by their `nameWithHash`. */
  readonly depPaths: Readonly<Record<string, string>>;
  /** The argv the program was started with (program first). */
  readonly argv: readonly string[];
  /** Declared sources and their content hashes. */
  readonly sources: Readonly<Record<string, string>>;
  /** GPU slots assigned to this attempt (also in `CUDA_VISIBLE_DEVICES`). */
  readonly gpuIndices?: readonly number[];
  /** Where the program may write its result: JSON `{ "result": …, "metadata": {…} }`. */
  readonly resultPath: string;
  /**
   * The step's durable checkpoint directory (also `$CAIRN_CHECKPOINT_DIR`): what earlier attempts
   * and runs of this step left there survives until the step succeeds. Absent on stores without one.
   */
  readonly checkpointDir?: string;
}
