/**
 * Who may talk to `cairn ui`. On a loopback bind no token is needed (only this machine's users
 * reach it); on any other bind every request, the live stream included, must carry the token:
 * `Authorization: Bearer …`, `?token=…` (the URL the server prints), or the cookie the server
 * sets on the first request that had it (so the page's own requests need not repeat it).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/** The cookie that carries the token after the first request. */
export const TOKEN_COOKIE = 'cairn_ui_token';

/** True for an address only this machine reaches (`127.0.0.0/8`, `::1`, `localhost`). */
export function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1' || host === '[::1]';
}

/** A fresh token (URL-safe, 32 bytes of entropy). */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The token a request carries, and where it came from (`query`: the server sets the cookie). */
export function presentedToken(req: IncomingMessage, url: URL): { token: string | undefined; fromQuery: boolean } {
  const q = url.searchParams.get('token');
  if (q !== null) return { token: q, fromQuery: true };
  const h = req.headers.authorization;
  if (h !== undefined && /^Bearer /i.test(h)) return { token: h.slice(7).trim(), fromQuery: false };
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === TOKEN_COOKIE) return { token: decodeURIComponent(v.join('=')), fromQuery: false };
  }
  return { token: undefined, fromQuery: false };
}

/** Constant-time comparison of a presented token with the server's. */
export function tokenMatches(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
