/**
 * A fault-injecting HTTP proxy in front of a real S3 endpoint (the RADOS Gateway of rgw.ts),
 * on 127.0.0.1. Requests pass through unchanged (SigV4 signatures stay valid: the Host header
 * is kept) unless a queued fault matches them:
 *
 * - `slowdown`: answer 503 SlowDown, as a throttling S3 does;
 * - `error500`: answer 500 InternalError;
 * - `reset`: destroy the connection before the request reaches the gateway;
 * - `reset-after`: forward it, let the gateway apply it, then destroy the connection instead of
 *   answering (a response lost after the write happened).
 */
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One kind of fault. */
export type FaultKind = 'slowdown' | 'error500' | 'reset' | 'reset-after';

/** Which requests a fault applies to. */
export interface FaultMatch {
  /** HTTP method (`PUT`, `GET`…). @default any */
  readonly method?: string;
  /** Matched against the path and query. @default any */
  readonly path?: RegExp;
}

/** A running proxy. */
export interface FaultProxy {
  /** `http://127.0.0.1:PORT`. */
  readonly endpoint: string;
  /** Queues `times` faults of `kind` for the next matching requests. */
  inject(kind: FaultKind, times: number, match?: FaultMatch): void;
  /** Faults still queued. */
  pending(): number;
  /** Requests seen, per fault applied (`pass` for those forwarded unchanged). */
  readonly seen: Record<FaultKind | 'pass', number>;
  /** Closes the proxy. */
  close(): Promise<void>;
}

interface Queued {
  kind: FaultKind;
  left: number;
  readonly match: FaultMatch;
}

function s3Error(res: ServerResponse, status: number, code: string, message: string): void {
  const body = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message><RequestId>fault-proxy</RequestId></Error>`;
  res.writeHead(status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** Starts a proxy to `upstream` (`http://127.0.0.1:PORT`). */
export async function startFaultProxy(upstream: string): Promise<FaultProxy> {
  const target = new URL(upstream);
  const queue: Queued[] = [];
  const seen: Record<FaultKind | 'pass', number> = { slowdown: 0, error500: 0, reset: 0, 'reset-after': 0, pass: 0 };
  const take = (req: IncomingMessage): FaultKind | undefined => {
    const q = queue.find((f) => f.left > 0 && (f.match.method === undefined || f.match.method === req.method) && (f.match.path === undefined || f.match.path.test(req.url ?? '')));
    if (!q) return undefined;
    q.left--;
    return q.kind;
  };
  const forward = (req: IncomingMessage, body: Buffer, onResponse: (up: IncomingMessage) => void, onError: () => void) => {
    const up = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, onResponse);
    up.on('error', onError);
    up.end(body);
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const fault = take(req);
      seen[fault ?? 'pass']++;
      if (fault === 'slowdown') return s3Error(res, 503, 'SlowDown', 'Please reduce your request rate.');
      if (fault === 'error500') return s3Error(res, 500, 'InternalError', 'We encountered an internal error. Please try again.');
      if (fault === 'reset') return req.socket.destroy();
      forward(
        req,
        body,
        (up) => {
          if (fault === 'reset-after') {
            up.resume();
            up.on('end', () => req.socket.destroy());
            return;
          }
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
        () => req.socket.destroy(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    inject(kind, times, match = {}) {
      queue.push({ kind, left: times, match });
    },
    pending: () => queue.reduce((n, q) => n + q.left, 0),
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
