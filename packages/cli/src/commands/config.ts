/** `cairn config`: the effective configuration and where each value came from. */
import { loadConfig, type ConfigFlags } from '../config.js';
import { out, type CliContext } from '../context.js';

/** Options of `cairn config`. */
export interface ConfigCommandOptions extends ConfigFlags {
  /** Print JSON. */
  readonly json?: boolean;
}

/** Keys whose values are never printed (store credentials in a config file). */
const SECRET = /credential|secret|token|password|accesskey/i;

/** `options` with every secret-looking value replaced. */
function hideSecrets(options: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(options).map(([k, v]) => [k, SECRET.test(k) ? '(hidden)' : v]));
}

/** Prints the effective configuration. */
export async function configCommand(ctx: CliContext, options: ConfigCommandOptions): Promise<number> {
  const config = await loadConfig({ ...options, config: ctx.configFile }, ctx.env, ctx.cwd);
  const executors = Object.fromEntries(
    Object.entries(config.executors).map(([name, e]) => [name, { use: typeof e.use === 'object' ? e.use.name : typeof e.use === 'function' ? `${e.use.name || 'function'}()` : (e.use ?? name), options: e.options ?? {} }]),
  );
  const stores = Object.fromEntries(Object.entries(config.stores).map(([name, s]) => [name, { use: typeof s.use === 'function' ? `${s.use.name || 'function'}()` : s.use.name, options: hideSecrets(s.options ?? {}) }]));
  const view = {
    file: config.file ?? null,
    prefix: config.prefix ?? null,
    maxConcurrent: config.maxConcurrent,
    executor: config.executor,
    remoteExecutor: config.remoteExecutor ?? null,
    forceRunFailed: config.forceRunFailed,
    layout: config.layout,
    onDrift: config.onDrift,
    versions: config.versions,
    executors,
    stores,
    pools: config.pools,
    defaults: config.defaults,
    leases: config.leaseTiming,
    sources: config.sources,
  };
  if (options.json) {
    out(ctx, JSON.stringify(view, null, 2));
    return 0;
  }
  const c = ctx.colors;
  const src = (k: keyof typeof config.sources) => c.dim(`(${config.sources[k]})`);
  out(ctx, `${c.bold('config file')}     ${config.file ?? c.dim('none found')}`);
  out(ctx, `${c.bold('prefix')}          ${config.prefix ?? c.yellow('not set')} ${src('prefix')}`);
  out(ctx, `${c.bold('maxConcurrent')}   ${config.maxConcurrent} ${src('maxConcurrent')}`);
  out(ctx, `${c.bold('executor')}        ${config.executor} ${src('executor')}`);
  out(ctx, `${c.bold('remoteExecutor')}  ${config.remoteExecutor ?? c.dim('none (steps with resources use the executor above)')}`);
  out(ctx, `${c.bold('forceRunFailed')}  ${String(config.forceRunFailed)} ${src('forceRunFailed')}`);
  out(ctx, `${c.bold('layout')}          ${config.layout}`);
  out(ctx, `${c.bold('onDrift')}         ${config.onDrift}`);
  out(ctx, `${c.bold('versions')}        ${config.versions}`);
  const names = Object.keys(executors);
  out(ctx, `${c.bold('executors')}       ${names.length === 0 ? c.dim('built-ins only') : ''}`);
  for (const [name, e] of Object.entries(executors)) out(ctx, `  ${name}: ${e.use} ${JSON.stringify(e.options)}`);
  out(ctx, `${c.bold('stores')}          ${Object.keys(stores).length === 0 ? c.dim('local only') : ''}`);
  for (const [name, s] of Object.entries(stores)) out(ctx, `  ${name}: ${s.use} ${JSON.stringify(s.options)}`);
  const pools = Object.entries(config.pools);
  out(ctx, `${c.bold('pools')}           ${pools.length === 0 ? c.dim('none') : pools.map(([k, v]) => `${k}=${v}`).join(', ')}`);
  out(ctx, `${c.bold('defaults')}        ${JSON.stringify(config.defaults)}`);
  const t = config.leaseTiming;
  out(ctx, `${c.bold('leases')}          heartbeat ${t.heartbeatMs} ms, stale after ${t.staleMs} ms${c.dim(config.leases === undefined ? ' (default)' : ' (file)')}`);
  return 0;
}
