/**
 * `cairn ui`: a live web view of every run in a store (local or any store the CLI can browse),
 * until Ctrl-C. Binds 127.0.0.1 by default; any other address needs a token (given, or made and
 * printed). Read-only unless `--allow-actions`.
 */
import { setPriority } from 'node:os';
import { loadConfig } from '../config.js';
import { out, type CliContext } from '../context.js';
import { usageError } from '../errors.js';
import { openStore } from '../store-view.js';
import { isLoopback, newToken } from '../web/auth.js';
import { startUiServer } from '../web/server.js';
import { assetsDir } from '../web/static.js';

/** Options of `cairn ui`. */
export interface UiCommandOptions {
  /** Store prefix. */
  readonly prefix?: string;
  /** Port. @default 7420 */
  readonly port?: number;
  /** Address to bind. @default '127.0.0.1' */
  readonly host?: string;
  /** Token requests must carry (required on non-loopback binds: made when not given). */
  readonly token?: string;
  /** Allow cancelling runs and unlocking stale leases. @default false */
  readonly allowActions?: boolean;
}

/** The `nice` value `cairn ui` runs at. */
export const UI_NICE = 10;

/** The default port. */
export const UI_PORT = 7420;

/** Serves until SIGINT/SIGTERM; resolves with the exit code. */
export async function uiCommand(ctx: CliContext, options: UiCommandOptions): Promise<number> {
  const config = await loadConfig({ config: ctx.configFile, prefix: options.prefix }, ctx.env, ctx.cwd);
  const view = await openStore(config);
  // A viewer yields the CPU to runners on the same host (tools/bench/ui.bench.mjs, row "live").
  try {
    setPriority(UI_NICE);
  } catch {
    // not allowed here: run at the normal priority
  }
  const host = options.host ?? '127.0.0.1';
  const token = options.token ?? (isLoopback(host) ? undefined : newToken());
  const port = options.port ?? UI_PORT;
  const server = await startUiServer({ view, host, port, token, allowActions: options.allowActions === true, assets: assetsDir(), secretProviders: config.secrets?.providers }).catch((e: unknown) => {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw usageError(`Port ${port} on ${host} is already in use.`, `Stop what uses it, or pick another port with --port (0 picks a free one).`, e);
    if (code === 'EADDRNOTAVAIL') throw usageError(`${host} is not an address of this machine.`, 'Pass --host with one of its addresses (or 0.0.0.0 for all).', e);
    throw e;
  });
  const url = token === undefined ? server.url : `${server.url}?token=${encodeURIComponent(token)}`;
  out(ctx, `cairn ui: ${view.prefix}${options.allowActions ? ' (actions allowed: cancel runs, unlock stale leases)' : ' (read-only)'}`);
  out(ctx, `Open ${url}`);
  if (token !== undefined && options.token === undefined) out(ctx, 'A token was made for this non-loopback bind; every request must carry it (the URL above sets it).');
  out(ctx, 'Ctrl-C stops.');
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await server.close();
  return 0;
}
