/**
 * Counts the HTTP requests a client sends, per operation (`PutObject`, `ListObjectsV2`, …),
 * retries included: benchmarks divide these by the steps of a run.
 */
import type { S3Client } from '@aws-sdk/client-s3';

/** Requests sent, per operation. */
export type RequestCounts = Readonly<Record<string, number>>;

/** A per-operation request counter, attached to one or more clients. */
export class RequestCounter {
  readonly #counts = new Map<string, number>();

  /** Counts one request of `operation`. */
  add(operation: string): void {
    this.#counts.set(operation, (this.#counts.get(operation) ?? 0) + 1);
  }

  /** Requests sent so far, per operation. */
  counts(): RequestCounts {
    return Object.fromEntries([...this.#counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  /** All requests sent so far. */
  total(): number {
    let n = 0;
    for (const v of this.#counts.values()) n += v;
    return n;
  }

  /** Forgets every count. */
  reset(): void {
    this.#counts.clear();
  }

  /**
   * Counts every attempt `client` sends. The middleware sits in the `deserialize` step, inside
   * the retry loop (`finalizeRequest`), so each retry counts as the request it is.
   */
  attach(client: S3Client): void {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        this.add((context.commandName ?? 'unknown').replace(/Command$/, ''));
        return next(args);
      },
      { step: 'deserialize', name: 'cairnRequestCounter', priority: 'low' },
    );
  }
}

/** `after - before`, per operation (operations with no new requests are left out). */
export function diffCounts(after: RequestCounts, before: RequestCounts): RequestCounts {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) {
    const d = v - (before[k] ?? 0);
    if (d !== 0) out[k] = d;
  }
  return out;
}
