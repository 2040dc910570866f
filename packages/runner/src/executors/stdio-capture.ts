/**
 * Routes writes to `process.stdout` and `process.stderr` made while a step runs into that step's
 * log, so `console.log` in a step lands in `cairn logs` and not across the runner's display.
 *
 * Two ways to say which step is running:
 * - in-process (`inline` with `captureOutput`): an AsyncLocalStorage context entered around the
 *   step's function, so writes from the function and from everything it awaits go to its log
 *   while steps interleave. Writes from callbacks Node does not track as the step's (a native
 *   addon's own threads, a child process's inherited stdio) are not captured.
 * - a worker thread (`threads`): the thread runs one attempt at a time, so every write the
 *   thread makes while the attempt runs goes to its log.
 *
 * The streams are patched once per thread, on first use; with no step to route to, a write goes
 * to the original stream unchanged.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** The two streams. */
export type StdioStream = 'stdout' | 'stderr';

/** Where one step's output goes. */
export interface OutputSink {
  /** Takes one write (a string or bytes, as given to `stream.write`). */
  write(stream: StdioStream, chunk: string | Uint8Array): void;
}

type Write = NodeJS.WriteStream['write'];

let storage: AsyncLocalStorage<OutputSink> | undefined;
let threadSink: OutputSink | undefined;
let originals: { stdout: Write; stderr: Write } | undefined;
/** Set while the runner's own output must reach the terminal even from inside a step's context. */
let bypass = 0;

function current(): OutputSink | undefined {
  if (bypass > 0) return undefined;
  return threadSink ?? storage?.getStore();
}

function patch(which: StdioStream, original: Write): Write {
  return function write(this: NodeJS.WriteStream, chunk: unknown, encoding?: unknown, cb?: unknown): boolean {
    const sink = current();
    if (sink === undefined) return (original as (...a: unknown[]) => boolean).call(this, chunk, encoding, cb);
    const bytes = typeof chunk === 'string' ? (typeof encoding === 'string' && encoding !== 'utf8' && encoding !== 'utf-8' ? Buffer.from(chunk, encoding as BufferEncoding) : chunk) : (chunk as Uint8Array);
    try {
      sink.write(which, bytes);
    } catch {
      // A log that cannot be written must not fail the step's console.log.
    }
    const done = typeof encoding === 'function' ? encoding : cb;
    if (typeof done === 'function') queueMicrotask(() => (done as () => void)());
    return true;
  } as Write;
}

function install(): void {
  if (originals !== undefined) return;
  originals = { stdout: process.stdout.write, stderr: process.stderr.write };
  process.stdout.write = patch('stdout', originals.stdout);
  process.stderr.write = patch('stderr', originals.stderr);
}

/** Runs `fn` with its writes (and those of everything it awaits) routed to `sink`. */
export function runWithOutput<T>(sink: OutputSink, fn: () => T): T {
  install();
  storage ??= new AsyncLocalStorage<OutputSink>();
  return storage.run(sink, fn);
}

/** Routes every write of this thread to `sink` until called again with `undefined` (worker threads). */
export function setThreadOutput(sink: OutputSink | undefined): void {
  install();
  threadSink = sink;
}

/** Runs `fn` with writes reaching the real streams, even inside a step's context (the runner's own display). */
export function uncaptured<T>(fn: () => T): T {
  bypass++;
  try {
    return fn();
  } finally {
    bypass--;
  }
}

