/**
 * Types-only contract shared by every Cairn package and plugin. Importing this file
 * pulls in no runtime code.
 */
import type { ArtifactStep } from './handle.js';

/** GPUs a step needs: a count, optionally of one type (e.g. `"a100"`). */
export interface GpuRequest {
  /** Number of GPUs. */
  readonly count: number;
  /** GPU model the step needs, matched by executors that know types. */
  readonly type?: string;
}

/**
 * Resources a step declares. They route and place the step; they never change its identity.
 */
export interface Resources {
  /** CPU cores. @default 1 */
  readonly cpu?: number;
  /** Memory in GiB. */
  readonly memoryGb?: number;
  /** GPUs: a count or `{ count, type }`. @default 0 */
  readonly gpus?: number | GpuRequest;
  /** Wall-clock limit in seconds (executors map it to e.g. Slurm's `--time`). */
  readonly timeLimit?: number;
  /** Free-form hints for executors (`partition`, `account`, `constraint`, …). */
  readonly hints?: Readonly<Record<string, unknown>>;
}

/** A reference to an exported step function: module + export, re-imported wherever the step runs. */
export interface FnRef {
  /** Absolute `file://` URL, absolute path, or a bare package specifier. */
  readonly module: string;
  /** The export's name. */
  readonly export: string;
}

/** Minimal structured logger handed to steps; lines go to the step's log. */
export interface StepLogger {
  /** Informational line. */
  info(message: string): void;
  /** Warning line. */
  warn(message: string): void;
  /** Error line. */
  error(message: string): void;
}

/**
 * What a running step receives besides its inputs. Provided by the runner, on every executor.
 */
export interface StepContext {
  /** The step's name. */
  readonly name: string;
  /** Absolute path (or URL) of this step's output directory. */
  readonly outputPath: string;
  /** Output paths of this step's dependencies, keyed by the dependency's `nameWithHash`. */
  readonly depPaths: Readonly<Record<string, string>>;
  /** Values returned by dependencies that returned one, keyed like `depPaths`. */
  readonly depResults: Readonly<Record<string, unknown>>;
  /** Aborted when the step is cancelled, times out, or its lease is lost. */
  readonly signal: AbortSignal;
  /** Writes to this attempt's log. */
  readonly log: StepLogger;
  /** The resources assigned (including e.g. `gpuIndices` from a placing executor). */
  readonly resources: Readonly<Resources & { gpuIndices?: readonly number[] }>;
  /** 1-based attempt number. */
  readonly attempt: number;
  /**
   * The step's durable checkpoint directory (absolute path), beside its output on the same
   * store: what earlier attempts and runs of this step left there is still there (a retry, a
   * rerun after a crash, an adopted job), until the step succeeds. Never published as the output.
   * Write each checkpoint under a temporary name starting with `.` and rename it: a name without
   * a leading dot is a complete checkpoint (see the runner README, "Commits and leases").
   * Absent on stores without one (the in-memory store).
   */
  readonly checkpointDir?: string;
  /** The executor client: submit more work from inside a step (see @cairn/runner). */
  readonly client: unknown;
  /**
   * The store's handle for writing outputs directly to the step's final location, for stores
   * whose outputs are not local files (`@cairn/store-s3`: a configured client, bucket and key of
   * the step's `s3://` output URL; its `stepS3(ctx)` types it). Absent on filesystem stores.
   */
  readonly store?: unknown;
  /**
   * A local directory holding a dependency's output, given its `nameWithHash` (a `depPaths` key)
   * or its output path: on a filesystem store the path itself; on an object store a copy
   * downloaded once per host (cached by the output's identity). Absent where the executor
   * provides no store access.
   */
  readonly localInput?: (dep: string) => Promise<string>;
  /**
   * The output path of dependency `dep` (its handle, or its `nameWithHash`): for an adopted
   * artifact, its source. `CAIRN_BAD_DEPENDENCY` when `dep` is not one of this step's dependencies.
   */
  path(dep: ArtifactStep<unknown> | string): string;
  /**
   * Dependency `dep` loaded by its artifact kind (the kind on the handle you pass: it loads in
   * whichever process the step runs), typed as the handle; without a kind, the value it returned.
   * Loaded once per step attempt: a second call returns the same promise.
   */
  resolved<T>(dep: ArtifactStep<T>): Promise<T>;
}

/** A step function that receives its output path (the `StepSpec` form, as in Marin). */
export type PathStepFn = (outputPath: string, ctx: StepContext) => unknown;

/** Best-effort provenance of a lowering: where and from what the plan was made. */
export interface Provenance {
  /** `git rev-parse HEAD`, or `null` outside a checkout. */
  readonly gitCommit: string | null;
  /** Uncommitted changes present. */
  readonly dirty: boolean | null;
  /** Current branch. */
  readonly branch: string | null;
  /** OS user. */
  readonly user: string | null;
  /** Host name. */
  readonly host: string | null;
  /** `process.argv`. */
  readonly argv: readonly string[];
  /** ISO time of capture. */
  readonly createdAt: string;
}
