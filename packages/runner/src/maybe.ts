/**
 * Values that may be promises. A store or a stage of a step's lifecycle answers at once when it
 * can (memory, a local disk) and returns a promise when it cannot; code written once as a
 * generator runs synchronously in the first case and asynchronously in the second ({@link drive}).
 */

/** A value, or a (native) promise of it. */
export type Maybe<T> = T | Promise<T>;

/** True when `v` is a promise. */
export function isPromise<T>(v: Maybe<T>): v is Promise<T> {
  return v instanceof Promise;
}

/**
 * Runs `gen` to its end. A promise it yields is awaited and its value (or error, thrown into the
 * generator) sent back; any other value it yields is sent back at once. Returns the generator's
 * result: synchronously when nothing it yielded was a promise, else as a promise. An error the
 * generator throws before it first yields a promise is thrown synchronously.
 */
export function drive<T>(gen: Generator<unknown, T, unknown>): Maybe<T> {
  let r = gen.next();
  while (!r.done) {
    const v = r.value;
    if (v instanceof Promise) return finish(gen, v);
    r = gen.next(v);
  }
  return r.value;
}

async function finish<T>(gen: Generator<unknown, T, unknown>, first: Promise<unknown>): Promise<T> {
  let pending = first;
  for (;;) {
    let value: unknown;
    let failed = false;
    try {
      value = await pending;
    } catch (err) {
      value = err;
      failed = true;
    }
    let r = failed ? gen.throw(value) : gen.next(value);
    while (!r.done && !(r.value instanceof Promise)) r = gen.next(r.value);
    if (r.done) return r.value;
    pending = r.value as Promise<unknown>;
  }
}
