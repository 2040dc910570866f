/**
 * The `cairn ui` server: Node's http, a JSON API over a {@link StoreView}, a live stream
 * (Server-Sent Events) of run and step states, and the page Vite built. Read-only unless
 * `allowActions`; every request is checked for the token when one is set (see auth.ts).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isStale, LiveLogMasks, type SecretProvider } from '@cairn/runner';
import { cancelFile } from '../report/cancel-request.js';
import type { StoreView } from '../store-view.js';
import { presentedToken, TOKEN_COOKIE, tokenMatches } from './auth.js';
import { RunIndex } from './runs.js';
import { readAsset } from './static.js';
import { stepDetail, stepLog } from './step-detail.js';
import { formatTrace, traceRows } from './trace.js';

/** How often the live stream looks at the store (one journal listing and one read of each watched journal). */
export const STREAM_POLL_MS = 1000;

/** Options of {@link startUiServer}. */
export interface UiServerOptions {
  /** The store to show. */
  readonly view: StoreView;
  /** Address to bind. @default '127.0.0.1' */
  readonly host?: string;
  /** Port (0: any free one). @default 0 */
  readonly port?: number;
  /** Token every request must carry; undefined: none needed (loopback binds only). */
  readonly token?: string | undefined;
  /** Allow cancelling runs and unlocking stale leases. @default false */
  readonly allowActions?: boolean;
  /** Directory of the built page; undefined: the API only (the page answers with how to build it). */
  readonly assets?: string | undefined;
  /**
   * Where the server looks up the secrets a running step declares, to mask them in its log
   * (`cairn.config.ts`'s `secrets.providers`); a running log it cannot mask is withheld.
   * @default the environment
   */
  readonly secretProviders?: readonly SecretProvider[] | undefined;
}

/** A running server. */
export interface UiServer {
  /** The http server. */
  readonly server: Server;
  /** `http://host:port/`. */
  readonly url: string;
  /** Stops accepting requests and ends live streams. */
  close(): Promise<void>;
}

const SECURITY_HEADERS = {
  // The page loads only its own files; a value that slipped into markup could not run a script.
  'content-security-policy': "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

function send(res: ServerResponse, status: number, body: unknown, type = 'application/json; charset=utf-8'): void {
  const data = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type });
  res.end(data);
}

const message = (e: unknown) => ((e instanceof Error ? e.message : String(e)).split('\n')[0] as string).replace(/\.+$/, '');

/** Starts the server; rejects with the listen error (`EADDRINUSE`, …). */
export async function startUiServer(options: UiServerOptions): Promise<UiServer> {
  const { view, token, allowActions = false, assets } = options;
  const runs = new RunIndex(view);
  const masks = new LiveLogMasks(options.secretProviders);
  const streams = new Set<ServerResponse>();

  async function api(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const parts = url.pathname.split('/').filter((p) => p !== '').map(decodeURIComponent); // ['api', …]
    const [, what, runId, sub, idx, leaf] = parts;
    if (req.method === 'POST') {
      // A custom header: a cross-site form or image cannot set it, so a page elsewhere cannot trigger an action.
      if (!allowActions) return send(res, 403, { error: 'Actions are disabled. Start cairn ui with --allow-actions to cancel runs and unlock stale leases.' });
      if (req.headers['x-cairn-action'] !== '1') return send(res, 403, { error: 'Actions need the X-Cairn-Action: 1 header.' });
      const run = runId === undefined ? undefined : await runs.run(runId);
      if (what !== 'runs' || run === undefined) return send(res, 404, { error: 'No such run.' });
      if (sub === 'cancel') {
        if (run.finished) return send(res, 409, { error: `Run ${run.runId} has already finished.` });
        await view.writeText(cancelFile(view.prefix, run.runId), JSON.stringify({ requested: Date.now(), by: 'cairn ui' }));
        return send(res, 202, { ok: true, message: `Cancel requested: the runner of ${run.runId} cancels its running steps within a few seconds.` });
      }
      const step = idx === undefined ? undefined : run.steps[Number(idx)];
      if (sub === 'steps' && leaf === 'unlock' && step !== undefined) {
        const lease = await view.store.readLease(step.path);
        if (lease === null) return send(res, 409, { error: 'The step holds no lease.' });
        if (!isStale(lease, view.staleMs)) return send(res, 409, { error: 'The lease is live (its holder refreshes it): it is never unlocked.' });
        const ok = await view.store.breakLease(step.path, lease);
        return send(res, ok ? 200 : 409, ok ? { ok: true, message: 'Stale lease cleared.' } : { error: 'The lease changed meanwhile (another runner took it).' });
      }
      return send(res, 404, { error: 'No such action.' });
    }
    if (what === 'info') return send(res, 200, { prefix: view.prefix, allowActions });
    if (what === 'stream') return stream(req, res, url.searchParams.get('run') ?? undefined);
    if (what !== 'runs') return send(res, 404, { error: 'No such endpoint.' });
    if (runId === undefined) return send(res, 200, { prefix: view.prefix, runs: await runs.list() });
    const run = await runs.run(runId);
    if (run === undefined) return send(res, 404, { error: `The store ${view.prefix} has no run ${runId}.` });
    if (sub === undefined) return send(res, 200, run.toJson());
    if (sub === 'trace' || sub === 'trace.csv' || sub === 'trace.tsv') {
      const rows = await traceRows(view, run);
      if (sub === 'trace') return send(res, 200, rows);
      const sep = sub === 'trace.csv' ? ',' : '\t';
      res.setHeader('content-disposition', `attachment; filename="trace-${run.runId}.${sub.slice(-3)}"`);
      return send(res, 200, formatTrace(rows, sep), sep === ',' ? 'text/csv; charset=utf-8' : 'text/tab-separated-values; charset=utf-8');
    }
    if (sub === 'steps' && idx !== undefined && /^\d+$/.test(idx)) {
      if (leaf === 'log') {
        const a = url.searchParams.get('attempt');
        const log = await stepLog(view, run, masks, Number(idx), a === null ? undefined : Number(a));
        return log === undefined ? send(res, 404, { error: 'No such step.' }) : send(res, 200, log);
      }
      const detail = await stepDetail(view, run, Number(idx));
      return detail === undefined ? send(res, 404, { error: 'No such step.' }) : send(res, 200, detail);
    }
    return send(res, 404, { error: 'No such endpoint.' });
  }

  /** The live stream: `runs` when the list changes, `changes` of the watched run, `store` when it fails or recovers. */
  function stream(req: IncomingMessage, res: ServerResponse, runId: string | undefined): void {
    res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/event-stream', connection: 'keep-alive' });
    res.write('retry: 1000\n\n');
    streams.add(res);
    const emit = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    let lastList = '';
    const params = new URL(req.url ?? '/', 'http://x').searchParams;
    let seq = Number(params.get('seq') ?? 0);
    // Steps the page already has (from its snapshot): their names and dependencies are not sent again.
    let known = Number(params.get('known') ?? 0);
    let storeOk: boolean | undefined;
    let busy = false;
    const tick = async () => {
      if (busy) return;
      busy = true;
      try {
        const list = JSON.stringify(await runs.list());
        if (list !== lastList) res.write(`event: runs\ndata: ${list}\n\n`);
        lastList = list;
        if (runId !== undefined) {
          const run = await runs.run(runId);
          if (run !== undefined) {
            const changes = run.changesSince(seq, known);
            if (changes.length > 0) emit('changes', { seq: run.seq, changes, finished: run.finished, end: run.end });
            seq = run.seq;
            known = run.steps.length;
          }
        }
        if (storeOk !== true) emit('store', { ok: true });
        storeOk = true;
      } catch (e) {
        if (storeOk !== false) emit('store', { ok: false, message: `The store ${view.prefix} cannot be read: ${message(e)}. Retrying every second.` });
        storeOk = false;
      } finally {
        busy = false;
      }
    };
    void tick();
    const timer = setInterval(() => void tick(), STREAM_POLL_MS);
    req.on('close', () => {
      clearInterval(timer);
      streams.delete(res);
    });
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://cairn-ui');
    if (token !== undefined) {
      const { token: presented, fromQuery } = presentedToken(req, url);
      if (!tokenMatches(presented, token)) return send(res, 401, { error: 'This cairn ui needs its token: open the URL it printed (…/?token=…) or send Authorization: Bearer <token>.' });
      if (fromQuery) res.setHeader('set-cookie', `${TOKEN_COOKIE}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`);
    }
    if (url.pathname.startsWith('/api/')) {
      api(req, res, url).catch((e: unknown) => {
        if (!res.headersSent) send(res, 503, { error: `The store ${view.prefix} cannot be read: ${message(e)}`, store: false });
        else res.end();
      });
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, { error: 'Method not allowed.' });
    if (assets === undefined) return send(res, 500, 'The cairn ui page is not built: run `npx nx build @cairn/cli`.', 'text/plain; charset=utf-8');
    // Paths that are not files are the page's own routes (index.html handles them).
    void readAsset(assets, url.pathname).then(async (a) => {
      const file = a ?? (await readAsset(assets, '/'));
      if (file === undefined) return send(res, 404, 'Not found', 'text/plain; charset=utf-8');
      send(res, 200, file.body, file.type);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const shownHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    server,
    url: `http://${shownHost}:${addr.port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of streams) s.end();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
