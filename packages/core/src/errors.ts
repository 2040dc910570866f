/**
 * Every error Cairn raises on purpose is a `CairnError` with a stable `code`.
 *
 * Codes are part of the public API: match on `err.code`, never on the message.
 * Errors survive duplicate copies of this package (two versions in one process):
 * use {@link isCairnError} instead of a bare `instanceof`.
 */

/** Stable error codes. One line each on when it is raised. */
export type CairnErrorCode =
  /** A step name or version is empty, contains `/`, `..`, a URL scheme or control characters. */
  | 'CAIRN_INVALID_NAME'
  /** Two different steps share one name and version (they would share one output path). */
  | 'CAIRN_DUPLICATE_STEP'
  /** A dependency is not a step handle / StepSpec. */
  | 'CAIRN_BAD_DEPENDENCY'
  /** A fixed-version step depends on a mutable (`dev`) one. */
  | 'CAIRN_MUTABLE_DEPENDENCY'
  /** A version breaks the runner's version rule (`versions: 'calendar'`: `YYYY.MM.DD[.N]`, `dev` or ending in `-dev`). */
  | 'CAIRN_BAD_VERSION'
  /** A value cannot be canonically encoded (function, symbol, NaN, cycle, class instance, sparse array…). */
  | 'CAIRN_CANONICAL_VALUE'
  /** A value (inputs, hashAttrs, resources.hints) nests deeper than `MAX_VALUE_DEPTH` levels; the message names the path. */
  | 'CAIRN_TOO_DEEP'
  /** An options object has a key Cairn does not know (a typo, or an option of another version); the message names the nearest known key. */
  | 'CAIRN_UNKNOWN_OPTION'
  /** A pin, `overrideOutputPath` or prefix is empty, is `.`, leaves the prefix (`..`), uses a reserved segment (`.cairn`) or holds a control character. */
  | 'CAIRN_INVALID_PATH'
  /** A directory Cairn would write into or run code from is unsafe: a symlink where a step directory is expected, owned by another user, or writable by group/others. */
  | 'CAIRN_UNSAFE_DIR'
  /** The step graph has a cycle; the message names it. */
  | 'CAIRN_GRAPH_CYCLE'
  /** A pinned expected fingerprint does not match the computed one. */
  | 'CAIRN_FINGERPRINT_MISMATCH'
  /** A built step at a fixed path (a pin, the 'versioned' layout) was built from another recipe than it has now; not served unless accepted (`acceptDrift`, `onDrift: 'warn'`). */
  | 'CAIRN_DRIFT'
  /** A function reference (module + export) is malformed or cannot be resolved. */
  | 'CAIRN_FN_REF'
  /** An inline closure was routed to an executor that runs outside this process. */
  | 'CAIRN_INLINE_FN_REMOTE'
  /** Encoded spec bytes are truncated, corrupt or of an unknown format version. */
  | 'CAIRN_CODEC_CORRUPT'
  /** A spec or handle option is invalid (bad resources, bad types). */
  | 'CAIRN_INVALID_SPEC'
  /** A step's record names another artifact kind than the one it is loaded as (`apply({ artifact })`); the message says how to rebuild it. */
  | 'CAIRN_ARTIFACT_KIND'
  /** A step returned a value that cannot be recorded (not plain JSON: a function, a cycle, a BigInt, a class instance…); the message names the path of the bad value. */
  | 'CAIRN_UNRECORDABLE_RESULT'
  /** An adopted artifact's source (`adopt({ source })`) does not exist; raised before anything that depends on it starts. */
  | 'CAIRN_ADOPT_MISSING'
  /** A command step's program is not on `PATH` (or not an executable at the path given), when the step is declared or started. */
  | 'CAIRN_COMMAND_NOT_FOUND'
  /** A command step's declared source is missing, unreadable, a directory, outside its project directory, or changed after lowering. */
  | 'CAIRN_COMMAND_SOURCE'
  /** A command step's program exited non-zero or was killed by a signal (the message quotes the end of its stderr), or wrote an unreadable result. */
  | 'CAIRN_COMMAND_FAILED'
  /** The native module was required (`CAIRN_NATIVE=1`) but could not be loaded. */
  | 'CAIRN_NATIVE_UNAVAILABLE'
  /** The native module was required (`CAIRN_NATIVE=1`) but no binary for this platform is installed. */
  | 'CAIRN_NATIVE_MISSING'
  /** Graph input to a backend is malformed (lengths, indices). */
  | 'CAIRN_GRAPH_INPUT'
  // Runner codes (declared here so every package shares one union).
  /** One or more steps failed; see `failures`. */
  | 'CAIRN_STEP_FAILED'
  /** A step failed in an earlier run and `forceRunFailed` is false. */
  | 'CAIRN_PREVIOUS_FAILURE'
  /** A dependency of this step failed, so it did not run. */
  | 'CAIRN_DEP_FAILED'
  /** A cached output disappeared after its inputs were pruned. */
  | 'CAIRN_PRUNED_OUTPUT_MISSING'
  /** The step was cancelled (signal, Ctrl-C, lease loss). */
  | 'CAIRN_CANCELLED'
  /** The step exceeded its timeout. */
  | 'CAIRN_TIMEOUT'
  /** The attempt was preempted (spot interruption, a SIGTERM the runner did not send, a preemption exit code, a scheduler's preemption): retried from `preemptionRetries`. */
  | 'CAIRN_PREEMPTED'
  /** A step's checkpoint directory cannot be created, read or kept. */
  | 'CAIRN_CHECKPOINT'
  /** Another runner took over this step's lease; the step was aborted. */
  | 'CAIRN_LEASE_LOST'
  /** The named executor is not registered, or cannot run this step. */
  | 'CAIRN_EXECUTOR'
  /** The artifact store cannot be read or written. */
  | 'CAIRN_STORE'
  /** Bad configuration: options, a config file's contents, `CAIRN_*` variables, a missing store prefix. */
  | 'CAIRN_CONFIG'
  /** A notification webhook's URL is not an `http:` or `https:` URL (refused when the options are checked). */
  | 'CAIRN_NOTIFY_URL'
  /** A step needs a secret (`secret('NAME')`) that no configured provider resolves; raised before any step starts, naming the secret and the step, never a value. */
  | 'CAIRN_SECRET_UNRESOLVED'
  /** A secret file is readable or writable by group or others (the message says `chmod 600`), or is not a regular file. */
  | 'CAIRN_SECRET_FILE_MODE'
  /** A step needs a secret, but its executor cannot deliver secrets safely (capability `secrets`, e.g. Ray without `secrets: 'runtime-env'`); raised before any step starts, naming the step. */
  | 'CAIRN_SECRET_UNSAFE'
  // CLI codes.
  /** A command-line flag or argument is malformed (a bad number, an unknown format). */
  | 'CAIRN_USAGE'
  /** A pipeline module cannot be found or imported, or exports no valid targets (the message quotes the first real error, file:line:col). */
  | 'CAIRN_PIPELINE_LOAD'
  /** `cairn run --typecheck`: the pipeline's project does not type-check (tsc's errors in the message). */
  | 'CAIRN_TYPECHECK'
  /** No step (in the pipeline or the store) matches what was asked for; the message lists what exists. */
  | 'CAIRN_NO_SUCH_STEP'
  /** A step selector matches several steps; the message lists them. */
  | 'CAIRN_AMBIGUOUS_STEP'
  /** The store prefix does not exist or holds no run yet. */
  | 'CAIRN_NO_STORE'
  /** A command that removes (`cairn clean`) was pointed at a directory that is not a Cairn store (no store marker, no Cairn record); nothing was removed. */
  | 'CAIRN_NOT_A_STORE'
  /** A step has no logs for the attempt asked for. */
  | 'CAIRN_NO_LOGS'
  /** A remote host or cluster failed (connection, submission, infrastructure). */
  | 'CAIRN_REMOTE'
  /** A remote job directory already runs a live copy of a different task: a second copy is never started beside it. */
  | 'CAIRN_REMOTE_BUSY';

const BRAND = Symbol.for('cairn.error');

/** Options for {@link CairnError}. */
export interface CairnErrorOptions {
  /** The step this error is about, when there is one. */
  step?: string | undefined;
  /** The underlying error. */
  cause?: unknown;
  /** Whether retrying the same step could succeed. @default false */
  retryable?: boolean | undefined;
}

/** The one error base class. The message says what went wrong and what to do. */
export class CairnError extends Error {
  /** Stable machine-readable code. */
  readonly code: CairnErrorCode;
  /** The step's name, where the error is about one step. */
  readonly step: string | undefined;
  /** Whether a retry of the same step could succeed (infrastructure faults). */
  readonly retryable: boolean;

  constructor(code: CairnErrorCode, message: string, options: CairnErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CairnError';
    this.code = code;
    this.step = options.step;
    this.retryable = options.retryable ?? false;
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/** True for any CairnError, even one thrown by another copy of this package. */
export function isCairnError(value: unknown): value is CairnError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}

/** True when `value` is a CairnError with the given code. */
export function hasCode(value: unknown, code: CairnErrorCode): value is CairnError {
  return isCairnError(value) && value.code === code;
}
