/**
 * The `inline` executor: runs `spec.fn(outputPath, ctx)` in the runner's own process. The only
 * executor that can run inline closures. Cancellation aborts `ctx.signal` (best effort: a
 * step that ignores it keeps running in the background after the runner gives up on it).
 */
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import { type ArtifactStep, CairnError, type StepContext, type StepLogger } from '@cairn/core';
import { SECRET_VALUES } from '@cairn/core/internal';
import type { Executor, ExecutorCapabilities, ExecutorHost, JobHandle, JobRequest, JobStatus } from '../executor/contract.js';
import { localInputFor } from '../worker/step-access.js';
import { type DepArtifacts, depArtifacts } from '../worker/dep-artifacts.js';
import { runWithOutput, type OutputSink } from './stdio-capture.js';
import { LOG_PATHS } from '../command/log-paths.js';
import { PROGRAM_USAGE_SINK, type ProgramUsage } from '../command/usage-sink.js';
import { programUsageFields } from '../command/program-usage.js';
import { writeUsage } from './usage.js';
import { keepShape } from '../run/shapes.js';
import { maskedLogWriter } from '../secrets/masked-writer.js';
import type { DepInputs } from '../run/job.js';

const capabilities: ExecutorCapabilities = Object.freeze({
  remote: false,
  sharedFs: true,
  deploysCode: false,
  inProcess: true,
  cancel: 'best-effort',
  logs: true,
  resumable: false,
  secrets: true,
});

/**
 * A job's dependency paths and results: the runner's own job hands them over as they are (the
 * same objects its `task` carries), without building the whole task payload, which an `apply`
 * step never reads (bench: compare.mjs rows files-10k, stream-100k-*); any other job through its task.
 */
function depInputsOf(job: JobRequest): DepInputs {
  const own = (job as { readonly inputs?: DepInputs }).inputs;
  return own !== undefined ? own : job.task;
}

/** The status of a step that returned nothing (shared: most steps return nothing). */
const SUCCEEDED: JobStatus = Object.freeze({ state: 'succeeded' });

/**
 * A logger that opens the attempt's log files on first use (most steps never log). What it
 * writes is masked on write (secrets/masked-writer.ts): the files never hold a declared value.
 */
function attemptLogger(job: JobRequest): { log: StepLogger; sink: OutputSink; close(): Promise<void> | undefined } {
  const streams: { out?: WriteStream; err?: WriteStream } = {};
  const open = (which: 'out' | 'err'): WriteStream | undefined => {
    if (streams[which]) return streams[which];
    const file = which === 'out' ? job.logPaths.stdout : job.logPaths.stderr;
    try {
      mkdirSync(dirname(file), { recursive: true });
      streams[which] = createWriteStream(file, { flags: 'a' });
      streams[which].on('error', () => undefined);
    } catch {
      return undefined;
    }
    return streams[which];
  };
  const out = maskedLogWriter(job.secrets, (stream, bytes) => void open(stream === 'stdout' ? 'out' : 'err')?.write(bytes));
  const line = (which: 'stdout' | 'stderr', level: string) => (message: string) => {
    out.write(which, `${new Date().toISOString()} ${level} ${message}\n`);
  };
  return {
    log: { info: line('stdout', 'INFO'), warn: line('stderr', 'WARN'), error: line('stderr', 'ERROR') },
    sink: { write: (stream, chunk) => out.write(stream, chunk) },
    close: () => {
      out.end();
      const open = Object.values(streams) as WriteStream[];
      if (open.length === 0) return undefined;
      return Promise.all(open.map((s) => new Promise<void>((resolve) => s.end(() => resolve())))).then(() => undefined);
    },
  };
}

/**
 * A step's context. A run makes one per step, so it keeps three fields and reads the rest from
 * the job through getters on the prototype: `name`, `outputPath`, `signal` (the job's
 * AbortSignal; the runner may create its controller lazily), `log` (opens nothing until used),
 * `depPaths`, `depResults`, `resources`, `attempt`, `checkpointDir`, `store` and `localInput` (the store's step access).
 */
class InlineContext implements StepContext {
  readonly client: unknown;
  readonly #job: JobRequest;
  #logger: ReturnType<typeof attemptLogger> | undefined = undefined;
  #artifacts: DepArtifacts | undefined = undefined;

  constructor(job: JobRequest, client: unknown) {
    this.client = client;
    this.#job = job;
  }

  get name(): string {
    return this.#job.spec.name;
  }

  get outputPath(): string {
    return this.#job.outputPath;
  }

  get depPaths(): StepContext['depPaths'] {
    return depInputsOf(this.#job).depPaths;
  }

  get depResults(): StepContext['depResults'] {
    return depInputsOf(this.#job).depResults;
  }

  get resources(): StepContext['resources'] {
    return this.#job.task.resources;
  }

  get attempt(): number {
    return this.#job.task.attempt;
  }

  get checkpointDir(): string | undefined {
    return this.#job.checkpointDir;
  }

  get signal(): AbortSignal {
    return this.#job.signal;
  }

  get store(): unknown {
    return this.#job.storeAccess?.store;
  }

  get localInput(): (dep: string) => Promise<string> {
    const job = this.#job;
    return localInputFor(job.spec.name, depInputsOf(job).depPaths, () => job.storeAccess);
  }

  /** `ctx.path` and `ctx.resolved`, made on first use. */
  #deps(): DepArtifacts {
    return (this.#artifacts ??= depArtifacts({ step: this.name, depPaths: this.depPaths, depResults: this.depResults, localInput: this.localInput }));
  }

  path(dep: ArtifactStep<unknown> | string): string {
    return this.#deps().path(dep);
  }

  resolved<T>(dep: ArtifactStep<T>): Promise<T> {
    return this.#deps().resolved(dep);
  }

  /** The attempt's log files: a command step's program writes into them directly (command/log-paths.ts). */
  get [LOG_PATHS](): JobRequest['logPaths'] {
    return this.#job.logPaths;
  }

  /** Set once a command step's program usage was written (the step's own best-effort numbers are not, then). */
  programMeasured = false;

  /** A command step's program is sampled and its usage written as the attempt's (command/usage-sink.ts). */
  get [PROGRAM_USAGE_SINK](): (used: ProgramUsage) => void {
    return (used) => {
      this.programMeasured = true;
      writeUsage(this.#job.attemptDir, programUsageFields('inline', used));
    };
  }

  /** The step's secret values (read by the lowered step function when it fills in its inputs; not enumerable). */
  get [SECRET_VALUES](): JobRequest['secrets'] {
    return this.#job.secrets;
  }

  get log(): StepLogger {
    return (this.#logger ??= attemptLogger(this.#job)).log;
  }

  /** Where the step's stdout/stderr writes go when captured (`captureOutput`). */
  static sink(ctx: InlineContext): OutputSink {
    return (ctx.#logger ??= attemptLogger(ctx.#job)).sink;
  }

  /** Closes the log files the step opened, if any. */
  static close(ctx: InlineContext): Promise<void> | undefined {
    return ctx.#logger?.close();
  }
}

// One context made at load and kept: V8 drops a class's instance shape, and the optimized
// `runSync` that checks it, once every instance has died (at each run's end). Bench row "10k chain".
keepShape(new InlineContext({} as JobRequest, undefined));

/** The status once the step's log files (if it opened any) are closed. */
function closed(ctx: InlineContext, status: JobStatus): JobStatus | Promise<JobStatus> {
  const closing = InlineContext.close(ctx);
  return closing === undefined ? status : closing.then(() => status);
}

/** Asynchronous function steps shorter than this get no usage file (writing one would cost more than the step). */
const INLINE_USAGE_MIN_MS = 1000;

/**
 * Best effort for an in-process step that ran a second or more: the runner process's CPU time
 * over the attempt and its lifetime peak RSS, which include every other step that ran meanwhile.
 */
function recordRunnerUsage(job: JobRequest, ctx: InlineContext, started: { wall: number; cpu: NodeJS.CpuUsage }): void {
  const wallMs = Date.now() - started.wall;
  if (ctx.programMeasured || wallMs < INLINE_USAGE_MIN_MS) return;
  const cpu = process.cpuUsage(started.cpu);
  writeUsage(job.attemptDir, {
    executor: 'inline',
    wallMs,
    cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    cpuScope: 'runner',
    peakMemoryBytes: process.resourceUsage().maxRSS * 1024,
    memoryKind: 'rss',
    memoryScope: 'runner',
    bestEffort: true,
    note: 'in-process: the runner process\'s CPU time over the attempt and its lifetime peak RSS, shared with every step it ran meanwhile',
  });
}

/** Calls the step: its status, or a promise of it when the function returned one (or a log file is being closed). */
function call(job: JobRequest, ctx: InlineContext, capture: boolean): JobStatus | Promise<JobStatus> {
  let out: unknown;
  try {
    const fn = job.spec.fn as NonNullable<JobRequest['spec']['fn']>;
    out = capture ? runWithOutput(InlineContext.sink(ctx), () => fn(job.outputPath, ctx)) : fn(job.outputPath, ctx);
  } catch (error) {
    return closed(ctx, { state: 'failed', error });
  }
  if (out !== null && typeof (out as Promise<unknown>)?.then === 'function') {
    const started = { wall: Date.now(), cpu: process.cpuUsage() };
    return Promise.resolve(out as Promise<unknown>).then(
      (result) => closed(ctx, { state: 'succeeded', result }),
      (error: unknown) => closed(ctx, { state: 'failed', error }),
    ).finally(() => recordRunnerUsage(job, ctx, started));
  }
  return closed(ctx, out === undefined ? SUCCEEDED : { state: 'succeeded', result: out });
}

/**
 * The `inline` executor. A class, not an object of closures: every runner has its own instance,
 * and the runner's synchronous path calls `runSync` through the prototype's one function.
 */
class InlineExecutor implements Executor {
  readonly name = 'inline';
  readonly capabilities = capabilities;
  #host: ExecutorHost | undefined = undefined;
  /** The host's client, read once at start: a step's context reads no field of the host (bench row "10k chain": see #prepare). */
  #client: unknown = undefined;
  readonly #active = new Set<string>();
  readonly #capture: boolean;

  constructor(capture = false) {
    this.#capture = capture;
  }

  /** The step function's context; throws when the executor cannot run the job. */
  #prepare(job: JobRequest): InlineContext {
    // Only compared, not read: V8 drops the shape of a runner's host object when the runner dies,
    // and with it the optimized code of every function that reads one of its fields.
    if (this.#host === undefined) throw new CairnError('CAIRN_EXECUTOR', 'The "inline" executor was not started; call start(host) before submit().');
    if (typeof job.spec.fn !== 'function') {
      throw new CairnError('CAIRN_EXECUTOR', `Step "${job.spec.name}" has no in-process function (it was decoded from bytes); run it on an executor that imports its module, e.g. "threads".`, { step: job.spec.name });
    }
    return new InlineContext(job, this.#client);
  }

  async start(h: ExecutorHost): Promise<void> {
    this.#host = h;
    this.#client = h.client;
  }

  async submit(job: JobRequest): Promise<JobHandle> {
    const ctx = this.#prepare(job);
    const h = this.#host as ExecutorHost;
    const active = this.#active;
    const jobId = job.jobKey;
    active.add(jobId);
    // Called after submit resolves, so a synchronous step function cannot report first.
    queueMicrotask(() => {
      const status = call(job, ctx, this.#capture);
      if (status instanceof Promise) {
        void status.then((s) => {
          active.delete(jobId);
          h.report(jobId, s);
        });
      } else {
        active.delete(jobId);
        h.report(jobId, status);
      }
    });
    return { jobId, executor: 'inline', info: {} };
  }

  runSync(job: JobRequest): JobStatus | Promise<JobStatus> {
    let ctx: InlineContext;
    try {
      ctx = this.#prepare(job);
    } catch (error) {
      return { state: 'failed', error };
    }
    const status = call(job, ctx, this.#capture);
    if (!(status instanceof Promise)) return status;
    const active = this.#active;
    const jobId = job.jobKey;
    active.add(jobId);
    return status.then((s) => {
      active.delete(jobId);
      return s;
    });
  }

  async poll(handles: readonly JobHandle[]): Promise<Map<string, JobStatus>> {
    const out = new Map<string, JobStatus>();
    for (const hd of handles) out.set(hd.jobId, this.#active.has(hd.jobId) ? { state: 'running' } : { state: 'lost', reason: 'not running in this process' });
    return out;
  }

  async cancel(): Promise<void> {
    // The runner aborts the job's signal; an in-process function cannot be stopped otherwise.
  }

  async stop(): Promise<void> {
    this.#host = undefined;
    this.#client = undefined;
  }
}

/** Options of {@link createInlineExecutor}. */
export interface InlineExecutorOptions {
  /**
   * Send what a step writes to `process.stdout`/`process.stderr` (its `console.log`s, from its
   * function and everything it awaits) to the attempt's log files instead of the terminal.
   * See `stdio-capture.ts` for what is not captured. @default false
   */
  readonly captureOutput?: boolean;
}

/** Creates the `inline` executor. */
export function createInlineExecutor(options: InlineExecutorOptions = {}): Executor {
  return new InlineExecutor(options.captureOutput === true);
}
