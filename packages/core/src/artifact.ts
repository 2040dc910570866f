/**
 * Artifact kinds: what a step leaves at its output path and how to load it (Marin's
 * `artifact_type`). A kind is code, not data: it never crosses a process boundary. It is found
 * wherever a handle is, because it lives on the handle (`apply({ …, artifact })`): the runner's
 * process loads what `run()`/`resolve()` return, and `ctx.resolved(dep)` loads with the kind of
 * the handle passed to it, in whichever process the step runs (a step on threads/process/ssh is
 * re-imported by module + export, so the handles its module defines are re-made there with
 * their kinds). Only the kind's `name` is recorded.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CairnError } from './errors.js';
import { describeValue } from './known-keys.js';

/** What a kind's `load` is given besides the path. */
export interface LoadContext {
  /** The name of the step whose artifact is loaded. */
  readonly step: string;
  /** The value the step returned, as recorded (undefined when it returned none). */
  readonly result: unknown;
  /** A local directory holding the output: the path itself on a filesystem store, a downloaded copy on an object store. */
  local(): Promise<string>;
}

/**
 * How to load (and optionally save and describe) what a step leaves at its output path. A plain
 * object or a class instance; `name` is recorded in the step's record, and a record of another
 * kind is refused (`CAIRN_ARTIFACT_KIND`) when the artifact is loaded.
 */
export interface ArtifactKind<T = unknown> {
  /** Recorded in the step's record; a short identifier such as `"json"` or `"model"`. */
  readonly name: string;
  /** Loads the artifact at `path` (the step's output path, or an adopted artifact's source). */
  load(path: string, ctx: LoadContext): T | Promise<T>;
  /**
   * Writes the value the step returned into its output directory (staged; published with the
   * step). Runs in the runner's process after the step, with the value as it crossed the
   * executor's boundary; the value is then not recorded as the step's result.
   */
  save?(value: T, path: string): void | Promise<void>;
  /** One line for people (CLI, logs). */
  describe?(value: T): string;
}

/** What `apply({ artifact })` accepts: any object with a `name` and a `load`. */
export interface AnyKind {
  readonly name: string;
  load(path: string, ctx: LoadContext): unknown;
}

/** The value a kind loads. */
export type KindValue<K> = K extends { load(path: string, ctx: LoadContext): infer T } ? Awaited<T> : never;

declare const RESULT_KIND: unique symbol;

/** The built-in kind of a step's returned value (its type is the step function's). */
export interface ResultKind extends ArtifactKind<unknown> {
  /** @internal a mark for the type checker only (absent at run time): the value's type is the function's return type. */
  readonly [RESULT_KIND]: true;
}

/** A directory of files (the `artifacts.dir` kind). */
export interface DirArtifact {
  /** The directory. */
  readonly path: string;
  /** Every file under it, relative (`/`-separated), sorted; Cairn's own files left out. */
  readonly files: readonly string[];
}

/** Cairn's own files inside an output directory (status, record, logs): not part of a `dir` artifact. */
function isCairnFile(name: string): boolean {
  return name === '.executor_status' || name === '.artifact.json' || name === '.cairn' || name.startsWith('.executor_info');
}

async function listFiles(root: string, rel: string, out: string[]): Promise<void> {
  const entries = await readdir(rel === '' ? root : join(root, rel), { withFileTypes: true });
  for (const e of entries) {
    if (rel === '' && isCairnFile(e.name)) continue;
    const r = rel === '' ? e.name : `${rel}/${e.name}`;
    if (e.isDirectory()) await listFiles(root, r, out);
    else out.push(r);
  }
}

function readFailed(kind: string, step: string, file: string, err: unknown): CairnError {
  return new CairnError('CAIRN_STORE', `Step "${step}": its ${kind} artifact cannot be read from ${file} (${(err as Error).message}); rebuild the step (rebuild: ["${step}"]) if its output was changed by hand.`, {
    step,
    cause: err,
  });
}

/** Marks the built-in result kind, in every copy of this package. */
const RESULT_BRAND = Symbol.for('cairn.kind.result');

const resultKind = Object.freeze({
  name: 'result',
  load: (_path: string, ctx: LoadContext) => ctx.result,
  [RESULT_BRAND]: true,
}) as unknown as ResultKind;

/** A JSON value in one file of the output directory. */
function json<T = unknown>(file = 'data.json'): ArtifactKind<T> {
  return Object.freeze({
    name: 'json',
    async load(path: string, ctx: LoadContext): Promise<T> {
      const at = join(await ctx.local(), file);
      let text: string;
      try {
        text = await readFile(at, 'utf8');
      } catch (err) {
        throw readFailed('json', ctx.step, at, err);
      }
      try {
        return JSON.parse(text) as T;
      } catch (err) {
        throw readFailed('json', ctx.step, at, err);
      }
    },
    async save(value: T, path: string): Promise<void> {
      await writeFile(join(path, file), `${JSON.stringify(value)}\n`);
    },
  });
}

/** A text file of the output directory. */
function text(file = 'data.txt'): ArtifactKind<string> {
  return Object.freeze({
    name: 'text',
    async load(path: string, ctx: LoadContext): Promise<string> {
      const at = join(await ctx.local(), file);
      try {
        return await readFile(at, 'utf8');
      } catch (err) {
        throw readFailed('text', ctx.step, at, err);
      }
    },
    async save(value: string, path: string): Promise<void> {
      await writeFile(join(path, file), value);
    },
    describe: (value: string) => `${value.length} characters`,
  });
}

const dirKind: ArtifactKind<DirArtifact> = Object.freeze({
  name: 'dir',
  async load(_path: string, ctx: LoadContext): Promise<DirArtifact> {
    const root = await ctx.local();
    const files: string[] = [];
    try {
      await listFiles(root, '', files);
    } catch (err) {
      throw readFailed('dir', ctx.step, root, err);
    }
    files.sort();
    return Object.freeze({ path: root, files: Object.freeze(files) });
  },
  describe: (value: DirArtifact) => `${value.files.length} files`,
});

/**
 * The built-in artifact kinds:
 * - `artifacts.result`: the value the step returned (typed as the function's return type).
 * - `artifacts.json<T>(file = 'data.json')`: a JSON value in a file of the output (saves a returned value there).
 * - `artifacts.text(file = 'data.txt')`: a text file of the output (saves a returned string there).
 * - `artifacts.dir`: the output as a directory of files, `{ path, files }`.
 */
export const artifacts = Object.freeze({ result: resultKind, json, text, dir: dirKind });

/** True for no kind or the built-in result kind (also from another copy of this package): the value is the recorded result. */
export function isResultKind(kind: ArtifactKind<unknown> | undefined): boolean {
  return kind === undefined || (kind as unknown as Record<symbol, unknown>)[RESULT_BRAND] === true;
}

/** Checks an `artifact` option: an object with a non-empty string `name` and a `load` function (and `save`, `describe` functions if given). */
export function checkKind(step: string, kind: unknown, where = 'artifact'): ArtifactKind<unknown> | undefined {
  if (kind === undefined) return undefined;
  const k = kind as Partial<ArtifactKind<unknown>> | null;
  const bad = (what: string): never => {
    throw new CairnError('CAIRN_INVALID_SPEC', `Step "${step}": ${where} ${what}; give an artifact kind like artifacts.json() or { name: 'model', load(path, ctx) { … } }.`, { step });
  };
  if ((typeof k !== 'object' && typeof k !== 'function') || k === null) return bad(`must be an artifact kind, got ${describeValue(kind)}`);
  if (typeof k.name !== 'string' || k.name.length === 0 || k.name.length > 200) return bad(`needs a non-empty string name, got ${describeValue(k.name)}`);
  if (typeof k.load !== 'function') return bad(`"${k.name}" has no load(path, ctx) function`);
  if (k.save !== undefined && typeof k.save !== 'function') return bad(`"${k.name}": save must be a function`);
  if (k.describe !== undefined && typeof k.describe !== 'function') return bad(`"${k.name}": describe must be a function`);
  return k as ArtifactKind<unknown>;
}

/** The error of a recorded kind that is not the one asked for. */
export function kindMismatch(step: string, path: string, recorded: string, requested: string): CairnError {
  return new CairnError(
    'CAIRN_ARTIFACT_KIND',
    `Step "${step}": its output at ${path} was recorded as a "${recorded}" artifact, but it is asked for as "${requested}". A kind is not part of a step's identity: rebuild it (rebuild: ["${step}"], cairn run --rebuild ${step}) to record it as "${requested}", bump its version, or ask for it as "${recorded}".`,
    { step },
  );
}
