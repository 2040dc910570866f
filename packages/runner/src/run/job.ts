/**
 * One attempt of one step as its executor sees it (a {@link JobRequest}). An in-process
 * executor reads few of its fields, so the task payload and dependency maps are built on first
 * access, and the AbortController behind `signal` only when someone asks for the signal: most
 * synchronous steps never do ("scheduler overhead" bench row). `abort` records the reason either way.
 */
import type { Resources, StepSpec, TaskPayload } from '@cairn/core';
import type { JobRequest } from '../executor/contract.js';
import type { StagedAttempt, StepStoreAccess, Store } from '../store/store.js';
import type { LeaseHolder } from '../store/leases.js';
import { CairnError, hasCode, makeTask } from '@cairn/core';
import { keyOf, type Node } from './node.js';

/** Dependencies' output paths and returned values, keyed by `nameWithHash`. */
export interface DepInputs {
  readonly depPaths: Record<string, string>;
  readonly depResults: Record<string, unknown>;
}

/** What a job needs from its run. */
export interface JobSource {
  /** The nodes of a step's dependencies, in order. */
  depNodesOf(node: Node): readonly Node[];
  /** The run's store (its step access, its lazily opened checkpoint directories, if it offers them). */
  readonly store: Pick<Store, 'stepAccess' | 'stepAccessRef' | 'openCheckpoints'>;
  /** The run's lease holder (checkpoint directories open only under its lease). */
  readonly holder: LeaseHolder;
  /** The values of the secrets a step declares (undefined: none); throws CAIRN_SECRET_UNRESOLVED. */
  secretsOf?(node: Node): Readonly<Record<string, string>> | undefined;
}

const NO_RESOURCES: Resources = Object.freeze({});

/** Dependencies' output paths and recorded results (every dependency's result is known by now). */
export function depInputsOf(deps: readonly Node[]): DepInputs {
  // Null-prototype objects start in dictionary mode: keys are step hashes, unique per step, and
  // literal objects would grow one hidden class per key.
  const depPaths = Object.create(null) as Record<string, string>;
  const depResults = Object.create(null) as Record<string, unknown>;
  for (let i = 0; i < deps.length; i++) {
    const d = deps[i] as Node;
    // An adopted artifact's path is its source; its own directory only holds its status and record.
    depPaths[keyOf(d)] = d.spec.adoptedSource ?? d.path;
    if (d.result !== undefined) depResults[keyOf(d)] = d.result;
  }
  return { depPaths, depResults };
}

/** A store's `CAIRN_CHECKPOINT` (it knows paths, not steps) with the step's name; other errors as they are. */
export function namedCheckpointError(step: string, err: unknown): unknown {
  if (!hasCode(err, 'CAIRN_CHECKPOINT') || err.step !== undefined) return err;
  return new CairnError('CAIRN_CHECKPOINT', `Step "${step}": ${err.message}`, { step, cause: err });
}

export class Job implements JobRequest {
  readonly #node: Node;
  readonly #source: JobSource;
  /** Where the attempt writes; gains `checkpoints` when the step first asks for them. */
  staged: StagedAttempt;
  readonly attempt: number;
  #deps: readonly Node[] | undefined = undefined;
  #inputs: DepInputs | undefined = undefined;
  #task: TaskPayload | undefined = undefined;
  #ac: AbortController | undefined = undefined;
  #access: StepStoreAccess | undefined | null = null;
  /** Aborted (with `reason`), whether or not the controller exists. */
  aborted = false;
  reason: unknown = undefined;

  constructor(source: JobSource, node: Node, staged: StagedAttempt, attempt: number) {
    this.#source = source;
    this.#node = node;
    this.staged = staged;
    this.attempt = attempt;
  }

  get jobKey(): string {
    return `${keyOf(this.#node)}.${this.attempt}`;
  }

  get spec(): StepSpec {
    return this.#node.spec;
  }

  get outputPath(): string {
    return this.staged.dir;
  }

  get finalPath(): string {
    return this.#node.path;
  }

  get resources(): Resources {
    return this.#node.spec.resources ?? NO_RESOURCES;
  }

  get logPaths(): { readonly stdout: string; readonly stderr: string } {
    return this.staged.logs;
  }

  get attemptDir(): string {
    return this.staged.scratch;
  }

  /** The step's checkpoint directory, opened by the store on first access (see Store.openCheckpoints). */
  get checkpointDir(): string | undefined {
    const staged = this.staged;
    if (staged.checkpoints !== undefined) return staged.checkpoints;
    const store = this.#source.store;
    if (store.openCheckpoints === undefined) return undefined;
    let dir: string;
    try {
      dir = store.openCheckpoints(staged, this.#source.holder);
    } catch (err) {
      throw namedCheckpointError(this.#node.name, err);
    }
    this.staged = { ...staged, checkpoints: dir };
    return dir;
  }

  get #depNodes(): readonly Node[] {
    return (this.#deps ??= this.#source.depNodesOf(this.#node));
  }

  /** Dependencies' paths and results. */
  get inputs(): DepInputs {
    return (this.#inputs ??= depInputsOf(this.#depNodes));
  }

  /** The store's step access for this step (made on first use); undefined on filesystem stores. */
  get storeAccess(): StepStoreAccess | undefined {
    if (this.#access === null) this.#access = this.#source.store.stepAccess?.(this.#node.path);
    return this.#access;
  }

  /** The values of the secrets the step declares (undefined: none), resolved by the run. */
  get secrets(): Readonly<Record<string, string>> | undefined {
    return this.#source.secretsOf?.(this.#node);
  }

  get task(): TaskPayload {
    if (this.#task !== undefined) return this.#task;
    const node = this.#node;
    const ref = this.#source.store.stepAccessRef;
    const inputs = this.inputs;
    const task = makeTask(node.spec, {
      outputPath: this.staged.dir,
      depPaths: inputs.depPaths,
      depResults: inputs.depResults,
      attempt: this.attempt,
      checkpointDir: this.staged.checkpoints,
      storeAccess: ref !== undefined ? { ...ref, path: node.path } : undefined,
      // discover.ts sends an inline closure only to an in-process executor.
      inlineChecked: true,
    });
    // Not opened yet: `task.checkpointDir` opens it when read, so an in-process step that reads
    // only its inputs from the task never does, while a task encoded for a worker elsewhere
    // (msgpack, postMessage, JSON: each reads every enumerable property) carries it.
    if (task.checkpointDir === undefined && this.#source.store.openCheckpoints !== undefined) {
      Object.defineProperty(task, 'checkpointDir', { enumerable: true, configurable: true, get: () => this.checkpointDir });
    }
    return (this.#task = task);
  }

  get signal(): AbortSignal {
    return this.controller().signal;
  }

  /** The AbortController behind `signal`, created now if needed (already aborted when `abort` came first). */
  controller(): AbortController {
    let ac = this.#ac;
    if (ac === undefined) {
      ac = this.#ac = new AbortController();
      if (this.aborted) ac.abort(this.reason);
    }
    return ac;
  }

  /**
   * A job of the same shape with no step, for shapes.ts to keep after the run (an executor may
   * still hold this one and read its step).
   */
  shell(): Job {
    return new Job(this.#source, null as unknown as Node, this.staged, this.attempt);
  }

  /** Stops the attempt (cancel, timeout, lease loss); the first reason wins. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.#ac?.abort(reason);
  }
}
