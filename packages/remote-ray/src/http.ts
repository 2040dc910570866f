/**
 * One HTTP request with Node's `http`/`https` modules. Not `fetch`: Node's fetch (undici) sends
 * `Sec-Fetch-Mode: cors` on every request, and Ray's dashboard treats any `Sec-Fetch-*` header as
 * browser traffic and refuses POSTs with 405 ("'POST' method not allowed for browser traffic"),
 * a guard against DNS rebinding. TLS certificates are verified (Node's default).
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** A response: its status and its whole body as text. */
export interface HttpResponse {
  /** The HTTP status. */
  readonly status: number;
  /** The body. */
  readonly text: string;
}

/** Sends one request; rejects on a network failure or after `timeoutMs`. */
export function send(method: 'GET' | 'POST' | 'PUT', url: string, headers: Readonly<Record<string, string>>, body: string | Buffer | undefined, timeoutMs: number): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = (u.protocol === 'https:' ? httpsRequest : httpRequest)(
      u,
      { method, headers: { accept: 'application/json', ...headers, ...(body === undefined ? {} : { 'content-type': typeof body === 'string' ? 'application/json' : 'application/zip', 'content-length': Buffer.byteLength(body) }) }, timeout: timeoutMs },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
    req.end(body);
  });
}
