/**
 * Executors by name. Built-ins (`inline`, `threads`, `process`) register exactly as plugins
 * do: as factories, instantiated on first use. One registry belongs to one `StepRunner`; an
 * executor is started when a run first needs it and stopped when the last run using it ends.
 */
import { CairnError } from '@cairn/core';
import type { Executor, ExecutorFactory, ExecutorHost, JobStatus } from './executor/contract.js';
import { createInlineExecutor } from './executors/inline.js';
import { createProcessExecutor, createThreadsExecutor } from './executors/local.js';

/** What `executors` accepts: instances or factories, as a list or by name. */
export type ExecutorsOption = readonly (Executor | ExecutorFactory)[] | Readonly<Record<string, Executor | ExecutorFactory>>;

/** The built-in executor factories. */
export const builtinExecutors: readonly ExecutorFactory[] = Object.freeze([
  { name: 'inline', create: () => createInlineExecutor() },
  { name: 'threads', create: (o: unknown) => createThreadsExecutor(o as Parameters<typeof createThreadsExecutor>[0]) },
  { name: 'process', create: (o: unknown) => createProcessExecutor(o as Parameters<typeof createProcessExecutor>[0]) },
]);

function isExecutor(v: Executor | ExecutorFactory): v is Executor {
  return typeof (v as Executor).submit === 'function';
}

/** Receives job reports for one run. */
export type ReportSink = (status: JobStatus) => void;

/** @internal Executors of one runner, with the one host they all report to. */
export class ExecutorRegistry {
  readonly #factories = new Map<string, ExecutorFactory>();
  readonly #instances = new Map<string, Executor>();
  readonly #starts = new Map<string, Promise<void>>();
  readonly #users = new Map<string, number>();
  readonly #options: Readonly<Record<string, unknown>>;
  /** Pending jobs by `executor\0jobId`. */
  readonly #sinks = new Map<string, ReportSink>();
  /** Reports that arrived before their job was registered. */
  readonly #early = new Map<string, JobStatus>();
  #host: Omit<ExecutorHost, 'report'> | undefined;

  constructor(extra: ExecutorsOption | undefined, options: Readonly<Record<string, unknown>> = {}) {
    this.#options = options;
    for (const f of builtinExecutors) this.#factories.set(f.name, f);
    const list = extra === undefined ? [] : Array.isArray(extra) ? (extra as readonly (Executor | ExecutorFactory)[]) : Object.entries(extra).map(([name, e]) => ({ name, e }));
    for (const item of list) {
      const { name, e } = 'e' in (item as object) ? (item as { name: string; e: Executor | ExecutorFactory }) : { name: (item as Executor).name, e: item as Executor | ExecutorFactory };
      if (typeof name !== 'string' || name === '') throw new CairnError('CAIRN_CONFIG', 'Every executor needs a non-empty name.');
      this.#factories.delete(name);
      this.#instances.delete(name);
      if (isExecutor(e)) this.#instances.set(name, e);
      else this.#factories.set(name, e);
    }
  }

  /** Sets what executors see of the runner (prefix, logger, client). */
  configure(host: Omit<ExecutorHost, 'report'>): void {
    this.#host = host;
  }

  /** Registered names. */
  names(): string[] {
    return [...new Set([...this.#instances.keys(), ...this.#factories.keys()])].sort();
  }

  /** True when `name` is registered. */
  has(name: string): boolean {
    return this.#instances.has(name) || this.#factories.has(name);
  }

  /** The executor named `name` (created on first use). Throws `CAIRN_EXECUTOR` for unknown names. */
  get(name: string): Executor {
    let ex = this.#instances.get(name);
    if (ex) return ex;
    const f = this.#factories.get(name);
    if (!f) {
      throw new CairnError('CAIRN_EXECUTOR', `No executor named "${name}". Registered: ${this.names().join(', ')}. Register it with new StepRunner({ executors: [...] }) or fix the step's executor name.`);
    }
    ex = f.create(this.#options[name]);
    this.#instances.set(name, ex);
    return ex;
  }

  /** Starts `name` for a run (once while any run uses it). */
  use(name: string): Promise<void> {
    const ex = this.get(name);
    this.#users.set(name, (this.#users.get(name) ?? 0) + 1);
    let p = this.#starts.get(name);
    if (!p) {
      const base = this.#host;
      if (!base) throw new CairnError('CAIRN_CONFIG', 'ExecutorRegistry.configure() must be called before use().');
      const host: ExecutorHost = { ...base, report: (jobId, status) => this.#report(name, jobId, status) };
      p = ex.start(host);
      this.#starts.set(name, p);
      p.catch(() => this.#starts.delete(name));
    }
    return p;
  }

  /** A run is done with `name`; stops it when no run uses it any more. */
  async release(name: string): Promise<void> {
    const n = (this.#users.get(name) ?? 1) - 1;
    if (n > 0) {
      this.#users.set(name, n);
      return;
    }
    this.#users.delete(name);
    const started = this.#starts.get(name);
    this.#starts.delete(name);
    if (started) {
      await started.catch(() => undefined);
      await this.get(name).stop();
    }
  }

  /** Registers where a job's terminal report goes; delivers a report that came early. */
  expect(executor: string, jobId: string, sink: ReportSink): void {
    const key = `${executor}\0${jobId}`;
    const early = this.#early.get(key);
    if (early !== undefined) {
      this.#early.delete(key);
      sink(early);
    } else this.#sinks.set(key, sink);
  }

  /** Stops routing a job's reports (it ended or was abandoned). */
  forget(executor: string, jobId: string): void {
    const key = `${executor}\0${jobId}`;
    this.#sinks.delete(key);
    this.#early.delete(key);
  }

  #report(executor: string, jobId: string, status: JobStatus): void {
    if (status.state === 'queued' || status.state === 'running') return;
    const key = `${executor}\0${jobId}`;
    const sink = this.#sinks.get(key);
    if (sink) {
      this.#sinks.delete(key);
      sink(status);
    } else if (this.#early.size < 10_000) this.#early.set(key, status);
  }
}
