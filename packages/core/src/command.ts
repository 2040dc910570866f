/**
 * `command()`: a step that runs any program (`python3 train.py …`). Lazy like `apply` and
 * lowered the same way: it *is* an `apply` handle whose function is the reserved
 * `cairn:command` runner (command-ref.ts) and whose inputs hold the program, its arguments,
 * its environment and each declared source's content hash. Caching, retries, leases,
 * executors and records treat it like any other step.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, resolve } from 'node:path';
import type { AnyKind } from './artifact.js';
import { brand, hasBrand, isArtifactStep } from './brand.js';
import { COMMAND_MODULE, COMMAND_REF, commandRunner } from './command-ref.js';
import { type CommandEnvironment, lowerEnvironment } from './command-environment.js';
import { hashSources, projectDir } from './command-sources.js';
import type { CommandContextName, CommandContextMarker, CommandEnvironmentTemplate } from './command-types.js';
import { CairnError } from './errors.js';
import { defineStep, getFnRef } from './fnref.js';
import { type ArtifactStep, apply, type Layout, type LoadedValue } from './handle.js';
import { isOut, type Out } from './out.js';
import { checkKnownKeys, describeValue, nearestName } from './known-keys.js';
import { isSecret, type Secret, secretNames } from './secret.js';
import type { Resources, StepContext } from './types.js';

const INPUT_BRAND = Symbol.for('cairn.command.input');
const CONTEXT_BRAND = Symbol.for('cairn.command.context');

/** A placeholder for input `K` in a command's `args` or `env` (see {@link input}). */
export interface InputRef<K extends string = string> {
  /** The input it names. */
  readonly input: K;
  /** Type-level brand (never set at run time): makes `InputRef<'a'>` unassignable to `InputRef<'b'>`. */
  readonly __cairnInput?: K;
}

/** A placeholder for a value of the running attempt (see {@link ATTEMPT}). */
export interface ContextRef<N extends CommandContextName = CommandContextName> {
  /** The context value it stands for. */
  readonly context: N;
}

class InputPlaceholder {
  readonly input: string;
  constructor(name: string) {
    this.input = name;
    Object.freeze(this);
  }
  toString(): string {
    return `input(${JSON.stringify(this.input)})`;
  }
}
brand(InputPlaceholder.prototype, INPUT_BRAND);

class ContextPlaceholder {
  readonly context: CommandContextName;
  constructor(name: CommandContextName) {
    this.context = name;
    Object.freeze(this);
  }
  toString(): string {
    return this.context === 'checkpointDir' ? 'CHECKPOINT_DIR' : this.context.toUpperCase();
  }
}
brand(ContextPlaceholder.prototype, CONTEXT_BRAND);

/**
 * The value of input `name` as one argument (or environment value): a dependency's output
 * path, the step's own output path for `OUT`, a string as is, a number or boolean in decimal.
 * Naming an input the step does not declare is a type error, and a `CAIRN_INVALID_SPEC` at
 * `command()` time.
 */
export function input<const K extends string>(name: K): InputRef<K> {
  if (typeof name !== 'string' || name.length === 0) {
    throw new CairnError('CAIRN_INVALID_SPEC', `input(name): name must be the name of one of the step's inputs, got ${describeValue(name)}.`);
  }
  return new InputPlaceholder(name) as InputRef<K>;
}

/** The 1-based attempt number of the running attempt, as a decimal argument. */
export const ATTEMPT: ContextRef<'attempt'> = new ContextPlaceholder('attempt') as ContextRef<'attempt'>;

/**
 * The step's durable checkpoint directory, as an absolute path argument (also
 * `$CAIRN_CHECKPOINT_DIR`): it outlives failed attempts and killed runs until the step succeeds,
 * so a program resumes from what it finds there. Never part of the output.
 */
export const CHECKPOINT_DIR: ContextRef<'checkpointDir'> = new ContextPlaceholder('checkpointDir') as ContextRef<'checkpointDir'>;

/** One argument (or environment value) of a command: a string or a placeholder. */
export type CommandArg<K extends string> = string | InputRef<K> | Out | ContextRef;

/** Options of {@link command}. `I` is the type of `inputs`. */
export interface CommandOptions<I extends Readonly<Record<string, unknown>>> {
  /** Step name: one path segment. */
  name: string;
  /** Artifact version (as for `apply`); ending in `dev` makes it mutable (always rebuilt). */
  version: string;
  /** The program: a name looked up on `PATH` (`python3`), or a path (relative ones from `dir`). Hashed by name, not by content: declare scripts in `sources`. */
  program: string;
  /** Its arguments, each one argv entry (no shell): strings, `input('name')`, `OUT`, `ATTEMPT`, `CHECKPOINT_DIR`. Hashed. @default [] */
  args?: readonly CommandArg<Extract<keyof NoInfer<I>, string>>[];
  /**
   * The step's inputs: dependency handles (the program gets their output paths), `OUT`, and plain
   * data. All of it is hashed and handed to the program in its context file; `input('name')`
   * puts one of them on the command line. @default {}
   */
  inputs?: I;
  /**
   * Files the program is made of (the script, a config it reads), relative to `dir`: their
   * content is hashed into the step's identity, so editing one rebuilds the step and its
   * dependents. A file not declared here (a module the script imports) is not. @default []
   */
  sources?: readonly string[];
  /**
   * The project directory: relative `sources` and a relative `program` are resolved there and
   * the program runs there (its working directory). A directory, or a file in it
   * (`import.meta.url`). Never hashed. @default process.cwd()
   */
  dir?: string | URL;
  /**
   * Environment variables for the program (values: strings, placeholders or `secret('NAME')`), on
   * top of the runner's. Hashed (a secret by its name only). Names starting with `CAIRN_` are reserved. @default {}
   */
  env?: Readonly<Record<string, CommandArg<Extract<keyof NoInfer<I>, string>> | Secret>>;
  /**
   * Where the program's environment comes from: a Python venv (`{ venv: '.venv' }`) or a conda
   * prefix to activate, a wrapper to start it under (`{ wrap: ['srun', '--gpus=1'] }`), and the
   * lock files that pin the environment's content (`lock: 'requirements.lock'`, hashed like
   * sources). The paths and the wrapper are never hashed. See {@link CommandEnvironment}. @default none
   */
  environment?: CommandEnvironment;
  /** Values that reach the program's context file but never its identity (thread counts, log levels). Plain data. @default {} */
  runtime?: Readonly<Record<string, unknown>>;
  /** Milliseconds between SIGTERM and SIGKILL to the program's process group on cancel or timeout. Never hashed. @default 1000 */
  killGraceMs?: number;
  /**
   * Exit codes by which the program says it was preempted (a spot interruption it caught): such an
   * attempt is retried from `preemptionRetries`, not `retries`. A program killed by a SIGTERM the
   * runner did not send counts as preempted too. Never hashed. @default []
   */
  preemptionExitCodes?: readonly number[];
  /** Preempted attempts retried without spending `retries`, with backoff. Never hashed. @default the runner's `preemptionRetries` (100) */
  preemptionRetries?: number;
  /** Keep the checkpoint directory after the step succeeds (`cairn clean` removes it with the step); else the commit removes it. Never hashed. @default false */
  keepCheckpoints?: boolean;
  /** Fixed output location (as for `apply`). */
  pin?: string;
  /** Default location when unpinned (as for `apply`). */
  layout?: Layout;
  /** Resources; `gpus` sets `CUDA_VISIBLE_DEVICES` to the slots the executor assigns. Never hashed. */
  resources?: Resources;
  /** Executor name; never hashed. */
  executor?: string;
  /** Pin the config fingerprint (as for `apply`). */
  expectedFingerprint?: string;
  /** Retries after failure. @default 0 */
  retries?: number;
  /** Per-attempt timeout (ms): the program's process group is stopped when it passes. */
  timeoutMs?: number;
  /** What the program leaves at its output path and how to load it (as for `apply`). @default the reported result */
  artifact?: AnyKind;
}

const COMMAND_KEYS: ReadonlySet<string> = new Set(['name', 'version', 'program', 'args', 'inputs', 'sources', 'dir', 'env', 'environment', 'runtime', 'killGraceMs', 'preemptionExitCodes', 'preemptionRetries', 'keepCheckpoints', 'pin', 'layout', 'resources', 'executor', 'expectedFingerprint', 'retries', 'timeoutMs', 'artifact']);

/** Executors that run on this host: a program they run must be found here. */
const LOCAL_EXECUTORS: ReadonlySet<string> = new Set(['inline', 'threads', 'process']);

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The step function of every command step (in-process): hands the attempt to the runner `@cairn/runner` registered. */
const commandStepFn = defineStep(COMMAND_MODULE, COMMAND_REF.export, (template: unknown, ctx: StepContext): Promise<unknown> => commandRunner(ctx.name)(template, ctx));

/** True for a handle made by {@link command}. */
export function isCommandStep(value: unknown): value is ArtifactStep<unknown> {
  return isArtifactStep(value) && getFnRef(value.fn)?.module === COMMAND_MODULE;
}

/**
 * Declares a lazy step that runs a program. Nothing runs until it is lowered and given to a
 * runner; exit code 0 is success. The program finds its whole context (inputs, output path,
 * attempt) in the JSON file `$CAIRN_CONTEXT` and may report a JSON result to `$CAIRN_RESULT`
 * (the Python helper `cairn_step` does both).
 *
 * ```ts
 * const tokens = command({
 *   name: 'tokenize', version: 'v1', program: 'python3',
 *   args: ['tokenize.py', '--in', input('corpus'), '--vocab', input('vocab'), '--out', OUT],
 *   inputs: { corpus: raw, vocab: 32000 },
 *   sources: ['tokenize.py'], dir: import.meta.dirname,
 * });
 * ```
 */
export function command<I extends Readonly<Record<string, unknown>>, K extends AnyKind>(options: CommandOptions<I> & { artifact: K }): ArtifactStep<LoadedValue<K, unknown>>;
export function command<I extends Readonly<Record<string, unknown>> = Record<never, never>>(options: CommandOptions<I>): ArtifactStep<unknown>;
export function command(options: CommandOptions<Readonly<Record<string, unknown>>>): ArtifactStep<unknown> {
  if (typeof options !== 'object' || options === null) {
    throw new CairnError('CAIRN_INVALID_SPEC', `command(options): options must be an object like { name, version, program, args }, got ${describeValue(options)}.`);
  }
  const name = typeof options.name === 'string' ? options.name : describeValue(options.name);
  checkKnownKeys(options, COMMAND_KEYS, `command() for step "${name}"`, { step: name });
  const inputs = options.inputs ?? {};
  if (typeof inputs !== 'object' || inputs === null || Array.isArray(inputs) || isArtifactStep(inputs)) {
    throw new CairnError('CAIRN_INVALID_SPEC', `Step "${name}": inputs must be a plain object such as { corpus: raw, vocab: 32000 }, got ${describeValue(inputs)}.`, { step: name });
  }
  const inInputs = secretNames(inputs);
  if (inInputs.length > 0) {
    throw new CairnError('CAIRN_INVALID_SPEC', `Step "${name}": secret ${inInputs[0]} is in inputs, which the program reads from its context file on disk; pass it through env instead (env: { ${inInputs[0]}: secret('${inInputs[0]}') }).`, { step: name });
  }
  const program = checkProgram(name, options.program);
  const dir = projectDir(name, options.dir);
  const args = lowerArgs(name, options.args, inputs);
  const env = lowerEnv(name, options.env, inputs);
  const environment = lowerEnvironment(name, dir, options.environment);
  // Lock files are hashed, checked and staged exactly as declared sources are (command-environment.ts).
  const declared = environment.lock.length === 0 || !Array.isArray(options.sources ?? []) ? options.sources : [...(options.sources ?? []), ...environment.lock];
  const sources = hashSources(name, dir, declared);
  if (options.killGraceMs !== undefined && !(Number.isSafeInteger(options.killGraceMs) && options.killGraceMs >= 0)) {
    throw new CairnError('CAIRN_INVALID_SPEC', `Step "${name}": killGraceMs must be a whole number of milliseconds ≥ 0, got ${describeValue(options.killGraceMs)}.`, { step: name });
  }
  const runtime = options.runtime ?? {};
  if (typeof runtime !== 'object' || runtime === null || Array.isArray(runtime)) {
    throw new CairnError('CAIRN_INVALID_SPEC', `Step "${name}": runtime must be a plain object such as { threads: 8 }, got ${describeValue(runtime)}.`, { step: name });
  }
  const remote = options.executor !== undefined && !LOCAL_EXECUTORS.has(options.executor);
  // A step that may run elsewhere (a named remote executor, or resources the runner may route
  // to one) finds its program there; a missing one then fails when it is started.
  if (!remote && options.resources === undefined) findProgram(name, environment.template?.wrap?.[0] ?? program, dir, environment.template);
  const hashed = { $command: 1, program, args, env, sources, inputs };
  const notHashed: Record<string, unknown> = { cwd: dir, runtime };
  if (options.killGraceMs !== undefined) notHashed.killGraceMs = options.killGraceMs;
  if (environment.template !== undefined) notHashed.environment = environment.template;
  if (options.preemptionExitCodes !== undefined) {
    const codes = options.preemptionExitCodes as unknown;
    if (!Array.isArray(codes) || !codes.every((c) => Number.isInteger(c) && c > 0 && c < 256)) {
      throw new CairnError('CAIRN_INVALID_SPEC', `Step "${name}": preemptionExitCodes must be a list of exit codes from 1 to 255 such as [75], got ${describeValue(codes)}.`, { step: name });
    }
    notHashed.preemptionExitCodes = [...codes];
  }
  if (options.preemptionRetries !== undefined) {
    if (!(Number.isSafeInteger(options.preemptionRetries) && options.preemptionRetries >= 0)) {
      throw new CairnError('CAIRN_INVALID_SPEC', `Step "${name}": preemptionRetries must be a whole number ≥ 0, got ${describeValue(options.preemptionRetries)}.`, { step: name });
    }
    notHashed.preemptionRetries = options.preemptionRetries;
  }
  if (options.keepCheckpoints !== undefined) {
    if (typeof options.keepCheckpoints !== 'boolean') throw new CairnError('CAIRN_INVALID_SPEC', `Step "${name}": keepCheckpoints must be true or false, got ${describeValue(options.keepCheckpoints)}.`, { step: name });
    notHashed.keepCheckpoints = options.keepCheckpoints;
  }
  return apply({
    name: options.name,
    version: options.version,
    fn: commandStepFn as (i: unknown, ctx: StepContext) => Promise<unknown>,
    inputs: hashed,
    runtime: notHashed,
    ...(options.pin === undefined ? {} : { pin: options.pin }),
    ...(options.layout === undefined ? {} : { layout: options.layout }),
    ...(options.resources === undefined ? {} : { resources: options.resources }),
    ...(options.executor === undefined ? {} : { executor: options.executor }),
    ...(options.expectedFingerprint === undefined ? {} : { expectedFingerprint: options.expectedFingerprint }),
    ...(options.retries === undefined ? {} : { retries: options.retries }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.artifact === undefined ? {} : { artifact: options.artifact }),
  } as Parameters<typeof apply>[0]) as ArtifactStep<unknown>;
}

function checkProgram(step: string, program: unknown): string {
  if (typeof program !== 'string' || program.length === 0 || program.includes('\0')) {
    throw new CairnError('CAIRN_INVALID_SPEC', `Step "${step}": program must be the name or path of an executable such as "python3", got ${describeValue(program)}.`, { step });
  }
  return program;
}

/** Checks that `program` can be started from `dir`: on `PATH` (after the environment's `bin/`), or an executable file. */
function findProgram(step: string, program: string, dir: string, environment: CommandEnvironmentTemplate | undefined): void {
  const prefix = environment?.venv ?? environment?.conda;
  if (prefix !== undefined) {
    try {
      accessSync(resolve(prefix, 'bin'), constants.X_OK);
    } catch (cause) {
      const which = environment?.venv !== undefined ? `venv ${prefix} has no bin/ directory; create it (python3 -m venv ${prefix})` : `conda prefix ${prefix} has no bin/ directory; create it (conda create -p ${prefix})`;
      throw new CairnError('CAIRN_COMMAND_NOT_FOUND', `Step "${step}": its ${which}, or fix environment.${environment?.venv !== undefined ? 'venv' : 'conda'}.`, { step, cause });
    }
  }
  const path = [...(prefix === undefined ? [] : [resolve(prefix, 'bin')]), ...(process.env.PATH ?? '').split(delimiter)];
  const candidates = program.includes('/') ? [isAbsolute(program) ? program : resolve(dir, program)] : path.filter((d) => d !== '').map((d) => resolve(d, program));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return;
    } catch {
      // next candidate
    }
  }
  const where = program.includes('/') ? `at ${candidates[0] as string}` : 'on PATH';
  throw new CairnError(
    'CAIRN_COMMAND_NOT_FOUND',
    `Step "${step}": program ${JSON.stringify(program)} is not an executable ${where}; install it, fix the name, or give its path (relative paths are resolved from ${dir}).`,
    { step },
  );
}

/** The hashed form of one argument: a string, a dependency handle, `OUT`, or a context marker. */
function lowerArg(step: string, where: string, value: unknown, inputs: Readonly<Record<string, unknown>>): unknown {
  if (typeof value === 'string') {
    if (value.includes('\0')) throw new CairnError('CAIRN_INVALID_SPEC', `Step "${step}": ${where} contains a NUL character, which no program argument can hold; remove it.`, { step });
    return value;
  }
  if (isOut(value)) return value;
  if (hasBrand(value, CONTEXT_BRAND)) return { $context: (value as ContextPlaceholder).context } satisfies CommandContextMarker;
  if (hasBrand(value, INPUT_BRAND)) {
    const key = (value as InputPlaceholder).input;
    if (!Object.hasOwn(inputs, key)) {
      const known = Object.keys(inputs);
      const near = nearestName(key, known);
      throw new CairnError(
        'CAIRN_INVALID_SPEC',
        `Step "${step}": ${where} is input(${JSON.stringify(key)}), but the step has no input "${key}"${near ? `; did you mean "${near}"?` : '.'} Declare it in inputs (${known.length > 0 ? `inputs: ${known.join(', ')}` : 'the step has none'}).`,
        { step },
      );
    }
    const v = inputs[key];
    if (isArtifactStep(v) || isOut(v)) return v;
    if (typeof v === 'string') return lowerArg(step, where, v, inputs);
    if ((typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean') return String(v);
    throw new CairnError(
      'CAIRN_INVALID_SPEC',
      `Step "${step}": ${where} is input(${JSON.stringify(key)}), which is ${describeValue(v)}; an argument is one string. Use a string, number, boolean or step handle there, or let the program read it from its context file ($CAIRN_CONTEXT).`,
      { step },
    );
  }
  const hint = isArtifactStep(value) ? `a step handle; name it in inputs and pass input('<name>')` : `${describeValue(value)}; arguments are strings: write ${JSON.stringify(String(value))}, or put the value in inputs and pass input('<name>')`;
  throw new CairnError('CAIRN_INVALID_SPEC', `Step "${step}": ${where} is ${hint}.`, { step });
}

function lowerArgs(step: string, args: unknown, inputs: Readonly<Record<string, unknown>>): unknown[] {
  if (args === undefined) return [];
  if (!Array.isArray(args)) {
    throw new CairnError('CAIRN_INVALID_SPEC', `Step "${step}": args must be an array such as ['train.py', '--out', OUT], got ${describeValue(args)}.`, { step });
  }
  const out = new Array<unknown>(args.length);
  for (let i = 0; i < args.length; i++) {
    if (!(i in args)) throw new CairnError('CAIRN_INVALID_SPEC', `Step "${step}": args[${i}] is a hole in the array; give every argument.`, { step });
    out[i] = lowerArg(step, `args[${i}]`, args[i], inputs);
  }
  return out;
}

function lowerEnv(step: string, env: unknown, inputs: Readonly<Record<string, unknown>>): Record<string, unknown> {
  if (env === undefined) return {};
  if (typeof env !== 'object' || env === null || Array.isArray(env)) {
    throw new CairnError('CAIRN_INVALID_SPEC', `Step "${step}": env must be a plain object such as { PYTHONHASHSEED: '0' }, got ${describeValue(env)}.`, { step });
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(env)) {
    if (!ENV_NAME.test(k)) throw new CairnError('CAIRN_INVALID_SPEC', `Step "${step}": env name ${JSON.stringify(k)} is not a valid variable name (letters, digits, _; not starting with a digit).`, { step });
    if (k.startsWith('CAIRN_')) throw new CairnError('CAIRN_INVALID_SPEC', `Step "${step}": env name ${k} is reserved (CAIRN_* variables are set by the runner); rename it.`, { step });
    // A secret reaches the program through its environment only (never its arguments or context file).
    out[k] = isSecret(v) ? v : lowerArg(step, `env.${k}`, v, inputs);
  }
  return out;
}
