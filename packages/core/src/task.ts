import { CairnError } from './errors.js';
import { packValue, unpackValue } from './codec.js';
import type { StepKind, StepSpec } from './spec.js';
import type { FnRef, Resources } from './types.js';

/**
 * How a worker builds a step's store access (`ctx.store`, `ctx.localInput`) for a store whose
 * outputs are not local files: a module + export re-imported where the step runs, called with
 * `(options, path)`. Plain data with no secret in it: it travels in task files.
 */
export interface TaskStoreAccess {
  /** Module exporting the builder (a bare package specifier such as `@cairn/store-s3`, or a file URL). */
  readonly module: string;
  /** The builder's export name. */
  readonly export: string;
  /** Options for the builder (msgpack-encodable; never credentials). */
  readonly options: unknown;
  /** The step's final output path (where `ctx.store` writes directly). */
  readonly path: string;
}

/**
 * Everything a worker in another thread, process or host needs to run one attempt of a
 * step, as plain data. Functions never cross a process boundary: the worker re-imports
 * `ref.module` and takes `ref.export`.
 */
export interface TaskPayload {
  /** Payload format version. */
  readonly v: 1;
  /** Step name. */
  readonly name: string;
  /** Step identity. */
  readonly nameWithHash: string;
  /** How the function is called. */
  readonly kind: StepKind;
  /** Module + export of the step function. */
  readonly ref: FnRef;
  /** Inputs template (`apply` steps): dependency slots and `OUT`. */
  readonly inputs: unknown;
  /** `nameWithHash` of each dependency, in `spec.deps` order (what slots point at). */
  readonly depKeys: readonly string[];
  /** Output location as the worker sees it. */
  readonly outputPath: string;
  /** Dependencies' output locations, keyed by `nameWithHash`. */
  readonly depPaths: Readonly<Record<string, string>>;
  /** Dependencies' returned values, keyed by `nameWithHash`. */
  readonly depResults: Readonly<Record<string, unknown>>;
  /** 1-based attempt. */
  readonly attempt: number;
  /** The step's durable checkpoint directory (`ctx.checkpointDir`), when its store keeps one. */
  readonly checkpointDir?: string;
  /** Resources assigned (may include `gpuIndices`). */
  readonly resources: Resources & { gpuIndices?: readonly number[] };
  /** The store's step access, for stores that offer one (object stores); absent on filesystems. */
  readonly storeAccess?: TaskStoreAccess;
  /**
   * The runner records the returned value: the worker checks it is plain JSON before it is
   * serialised or cloned on its way back (a class instance would arrive as a plain object).
   */
  readonly recordsResult?: true;
}

/** What one attempt adds to its step's spec to make a {@link TaskPayload}. */
export interface TaskInit {
  /** Where the attempt writes (`task.outputPath`). */
  readonly outputPath: string;
  /** Dependencies' output locations, keyed by `nameWithHash`. */
  readonly depPaths: Record<string, string>;
  /** Dependencies' returned values, keyed by `nameWithHash`. @default {} */
  readonly depResults?: Record<string, unknown>;
  /** 1-based attempt. */
  readonly attempt: number;
  /** Resources assigned. @default spec.resources ?? {} */
  readonly resources?: Resources & { gpuIndices?: readonly number[] };
  /** The step's durable checkpoint directory, when already open. */
  readonly checkpointDir?: string;
  /** The store's step access (object stores). */
  readonly storeAccess?: TaskStoreAccess;
  /**
   * The caller has made sure the step runs in this process when its function is an inline
   * closure (the runner checks this when it picks the executor): `ref` is then the placeholder
   * `{ module: 'inline:', export: name }` instead of a `CAIRN_INLINE_FN_REMOTE` error.
   * @default false
   */
  readonly inlineChecked?: boolean;
}

/**
 * Builds the payload for one attempt: the one builder, used by the runner for every job and by
 * tests and tools that hand a payload to a worker. Throws `CAIRN_INLINE_FN_REMOTE` when the
 * step's function is an inline closure (it cannot be re-imported elsewhere), unless
 * `init.inlineChecked`.
 */
export function makeTask(spec: StepSpec, init: TaskInit): TaskPayload {
  const ref = spec.ref ?? (init.inlineChecked === true ? { module: 'inline:', export: spec.name } : undefined);
  if (ref === undefined) {
    throw new CairnError(
      'CAIRN_INLINE_FN_REMOTE',
      `Step "${spec.name}": its function is an inline closure and cannot run outside this process. Export it and wrap it with defineStep(import.meta.url, '<exportName>', fn), or run it on the "inline" executor.`,
      { step: spec.name },
    );
  }
  const deps = spec.deps;
  const depKeys = new Array<string>(deps.length);
  for (let i = 0; i < deps.length; i++) depKeys[i] = (deps[i] as StepSpec).nameWithHash;
  return {
    v: 1,
    name: spec.name,
    nameWithHash: spec.nameWithHash,
    kind: spec.kind,
    ref,
    inputs: spec.inputs,
    depKeys,
    outputPath: init.outputPath,
    depPaths: init.depPaths,
    depResults: init.depResults ?? {},
    attempt: init.attempt,
    ...(init.checkpointDir !== undefined ? { checkpointDir: init.checkpointDir } : {}),
    resources: init.resources ?? spec.resources ?? {},
    ...(init.storeAccess !== undefined ? { storeAccess: init.storeAccess } : {}),
    // A kind with save takes the value instead (it need not be JSON).
    ...(spec.artifact?.save === undefined ? { recordsResult: true as const } : {}),
  };
}

/** Encodes a task payload as msgpack. */
export function encodeTask(task: TaskPayload): Uint8Array {
  return packValue(task);
}

/** Decodes a task payload; corrupt bytes throw `CAIRN_CODEC_CORRUPT`. */
export function decodeTask(bytes: Uint8Array): TaskPayload {
  let t: TaskPayload;
  try {
    t = unpackValue(bytes) as TaskPayload;
  } catch (cause) {
    throw new CairnError('CAIRN_CODEC_CORRUPT', 'Cannot decode a task payload: invalid msgpack. Check the worker and runner use the same Cairn version.', { cause });
  }
  if (typeof t !== 'object' || t === null || t.v !== 1 || typeof t.name !== 'string' || typeof t.ref?.module !== 'string' || !Array.isArray(t.depKeys)) {
    throw new CairnError('CAIRN_CODEC_CORRUPT', 'Cannot decode a task payload: unexpected shape or version. Check the worker and runner use the same Cairn version.');
  }
  return t;
}
