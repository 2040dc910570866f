/** `cairn unlock --stale`: clears leases whose holder is dead (or whose heartbeat expired). */
import { isStale } from '@cairn/runner';
import { loadConfig } from '../config.js';
import { out, type CliContext } from '../context.js';
import { openStore } from '../store-view.js';

/** Options of `cairn unlock`. */
export interface UnlockCommandOptions {
  /** Clear stale leases (without it, only list leases). */
  readonly stale?: boolean;
  /** Store prefix. */
  readonly prefix?: string;
}

/** Lists leases, and with `--stale` removes the stale ones (a live holder's lease is never touched). */
export async function unlockCommand(ctx: CliContext, options: UnlockCommandOptions): Promise<number> {
  const config = await loadConfig({ config: ctx.configFile, prefix: options.prefix }, ctx.env, ctx.cwd);
  const view = await openStore(config);
  const store = view.store;
  const c = ctx.colors;
  const leased = (await view.scan()).filter((s) => s.lease !== null);
  if (leased.length === 0) {
    out(ctx, 'No leases are held.');
    return 0;
  }
  let cleared = 0;
  let stale = 0;
  for (const s of leased) {
    const lease = s.lease!;
    const h = lease.holder;
    const who = h ? `${h.host}:${h.pid} (run ${h.runId})` : 'unreadable holder';
    if (!isStale(lease, view.staleMs)) {
      out(ctx, `${c.blue('live ')} ${s.rel} held by ${who}`);
      continue;
    }
    stale++;
    if (!options.stale) {
      out(ctx, `${c.yellow('stale')} ${s.rel} held by ${who}`);
      continue;
    }
    if (await store.breakLease(s.path, lease)) {
      cleared++;
      out(ctx, `${c.green('cleared')} ${s.rel} (was held by ${who})`);
    } else {
      out(ctx, `${c.yellow('kept ')} ${s.rel}: the lease changed meanwhile (another runner took it)`);
    }
  }
  if (!options.stale && stale > 0) out(ctx, `${stale} stale lease(s); rerun with --stale to clear them.`);
  else if (options.stale) out(ctx, `${cleared} stale lease(s) cleared.`);
  return 0;
}
