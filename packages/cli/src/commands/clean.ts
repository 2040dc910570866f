/**
 * `cairn clean [pipeline] [--yes]`: removes failed outputs (FAILED, DEP_FAILED, CANCELLED, or
 * left without a status), attempt directories dead runs left beside output paths, and, given a
 * pipeline, outputs the pipeline no longer references, each with its checkpoint directory
 * (`--keep-checkpoints` keeps those). Lists what it would remove unless
 * `--yes`. A step with a live lease is never touched, and nothing is touched under a prefix that
 * is not a Cairn store (store-check.ts).
 */
import { isStale } from '@cairn/runner';
import { loadConfig } from '../config.js';
import { out, type CliContext } from '../context.js';
import { loadPipeline } from '../pipeline.js';
import { requireStore } from '../store-check.js';
import { insidePrefix, openStore } from '../store-view.js';

/** Options of `cairn clean`. */
export interface CleanCommandOptions {
  /** Delete (otherwise only list). */
  readonly yes?: boolean;
  /** Store prefix. */
  readonly prefix?: string;
  /** Print JSON. */
  readonly json?: boolean;
  /** Keep the checkpoint directories of the outputs removed (a training step's rerun resumes from them). */
  readonly keepCheckpoints?: boolean;
}

/** Why an output is removable. */
export type CleanReason = 'failed' | 'dep-failed' | 'cancelled' | 'incomplete' | 'unreferenced' | 'abandoned attempt' | 'checkpoints';

/** Lists (and with `--yes` removes) failed and unreferenced outputs. */
export async function cleanCommand(ctx: CliContext, file: string | undefined, options: CleanCommandOptions): Promise<number> {
  const config = await loadConfig({ config: ctx.configFile, prefix: options.prefix }, ctx.env, ctx.cwd);
  const view = await openStore(config);
  const prefix = view.prefix;
  let referenced: Set<string> | undefined;
  if (file !== undefined) {
    const pipeline = await loadPipeline(file, ctx.cwd, config.layout);
    referenced = new Set(pipeline.specs.map((s) => s.outputPath(prefix)));
  }
  // Never act on a directory that is not a Cairn store, whatever the prefix (store-check.ts).
  const steps = await view.scan();
  await requireStore(view, steps, config.sources.prefix, 'clean');
  const victims: { path: string; rel: string; reason: CleanReason }[] = [];
  for (const s of steps) {
    if (s.lease !== null && !isStale(s.lease, view.staleMs)) continue;
    let reason: CleanReason | undefined;
    if (s.status === 'FAILED') reason = 'failed';
    else if (s.status === 'DEP_FAILED') reason = 'dep-failed';
    else if (s.status === 'CANCELLED') reason = 'cancelled';
    else if (s.status === null) reason = 'incomplete';
    else if (referenced !== undefined && !referenced.has(s.path)) reason = 'unreferenced';
    if (reason === undefined) continue;
    victims.push({ path: s.path, rel: s.rel, reason });
    // A removed output's checkpoints go with it: nothing would resume from them but a rerun of the same step.
    const checkpoints = options.keepCheckpoints ? null : await view.checkpoints(s.path);
    if (checkpoints !== null) victims.push({ path: checkpoints.root, rel: view.rel(checkpoints.root), reason: 'checkpoints' });
  }
  // What dead attempts left beside output paths (the next run that takes a step over removes its own).
  for (const d of await view.staged()) {
    const lease = await view.store.readLease(d.step);
    if (lease !== null && !isStale(lease, view.staleMs)) continue;
    victims.push({ path: d.path, rel: view.rel(d.path), reason: 'abandoned attempt' });
  }
  // Never leave the prefix, whatever the scan returned: every victim is checked before anything is removed.
  for (const v of victims) insidePrefix(view, v.path);
  if (options.yes) for (const v of victims) await view.remove(v.path);
  if (options.json) {
    out(ctx, JSON.stringify({ prefix, removed: options.yes === true, outputs: victims.map(({ rel, reason, path }) => ({ step: rel, path, reason })) }, null, 2));
    return 0;
  }
  const c = ctx.colors;
  if (victims.length === 0) {
    out(ctx, `Nothing to clean in ${prefix}${referenced === undefined ? ' (pass a pipeline to also find unreferenced outputs)' : ''}.`);
    return 0;
  }
  for (const v of victims) out(ctx, `${options.yes ? c.red('removed') : 'would remove'} ${v.rel} ${c.dim(`(${v.reason})`)}`);
  if (!options.yes) out(ctx, `${victims.length} output(s); rerun with --yes to remove them.`);
  else out(ctx, `${victims.length} output(s) removed.`);
  return 0;
}
