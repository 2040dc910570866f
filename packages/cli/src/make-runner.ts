/** Builds a `StepRunner` from the effective configuration. */
import { builtinExecutors, createInlineExecutor, StepRunner, type Executor, type ExecutorFactory, type InlineExecutorOptions, type RunnerListener, type RunnerLogger, type StoreFactory } from '@cairn/runner';
import { CairnError } from '@cairn/core';
import { requirePrefix, type EffectiveConfig } from './config.js';

/** The configured store plugins, registered under their keys, and their options. */
export function storesOf(config: Pick<EffectiveConfig, 'stores'>): { stores: StoreFactory[]; storeOptions: Record<string, unknown> } {
  const stores: StoreFactory[] = [];
  const storeOptions: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(config.stores)) {
    const f = (typeof s.use === 'function' ? s.use() : s.use) as Partial<StoreFactory> | null | undefined;
    if (typeof f !== 'object' || f === null || typeof f.create !== 'function' || !Array.isArray(f.schemes)) {
      throw new CairnError('CAIRN_CONFIG', `Store "${name}": use did not give a store factory ({ name, schemes, create }); pass the plugin's factory, e.g. use: s3StoreFactory from @cairn/store-s3.`);
    }
    const create = f.create.bind(f);
    stores.push({ name, schemes: f.schemes, create });
    if (s.options !== undefined) storeOptions[name] = s.options;
  }
  return { stores, storeOptions };
}

/**
 * The runner for a command: prefix, concurrency, pools, the default executor and every
 * configured executor (a factory object, or a built-in by name, registered under its key,
 * with its `options`), and the configured store plugins.
 */
export function makeRunner(config: EffectiveConfig, extra: { onEvent?: RunnerListener; logger?: RunnerLogger } = {}): StepRunner {
  const executors: Record<string, ExecutorFactory> = {};
  const executorOptions: Record<string, unknown> = {};
  for (const [name, e] of Object.entries(config.executors)) {
    if (e.options !== undefined) executorOptions[name] = e.options;
    const use = e.use ?? name;
    if (typeof use === 'string') {
      const builtin = builtinExecutors.find((b) => b.name === use);
      if (builtin === undefined) {
        throw new CairnError(
          'CAIRN_CONFIG',
          `Executor "${name}" uses "${use}", which is not a built-in (${builtinExecutors.map((b) => b.name).join(', ')}). Import the plugin's factory in cairn.config.ts and pass it as use.`,
        );
      }
      if (use !== name) executors[name] = { name, create: (o: unknown) => builtin.create(o) };
    } else if (typeof use === 'function') {
      executors[name] = { name, create: (o: unknown) => (use as (o: unknown) => Executor)(o ?? {}) };
    } else {
      if (typeof use.create !== 'function') {
        throw new CairnError('CAIRN_CONFIG', `Executor "${name}": use must be a built-in name, an executor factory ({ name, create(options) }) or a create function.`);
      }
      executors[name] = { name, create: (o: unknown) => (use.create as (o: unknown) => Executor)(o ?? {}) };
    }
  }
  // In-process steps' console output goes to their logs (the display shows it above the bar).
  const captured = (o: unknown) => createInlineExecutor({ captureOutput: true, ...(o as InlineExecutorOptions | undefined) });
  for (const [name, e] of Object.entries(config.executors)) if ((e.use ?? name) === 'inline') executors[name] = { name, create: captured };
  executors.inline ??= { name: 'inline', create: captured };
  return new StepRunner({
    prefix: requirePrefix(config),
    maxConcurrent: config.maxConcurrent,
    defaultExecutor: config.executor,
    ...(config.remoteExecutor !== undefined ? { remoteExecutor: config.remoteExecutor } : {}),
    executors,
    executorOptions,
    ...storesOf(config),
    pools: config.pools,
    ...(config.leases !== undefined ? { leases: config.leases } : {}),
    ...(config.notify !== undefined ? { notify: config.notify } : {}),
    ...(config.secrets !== undefined ? { secrets: config.secrets } : {}),
    layout: config.layout,
    onDrift: config.onDrift,
    versions: config.versions,
    // What the CLI runs is meant to be read back (cairn ui, cairn report), whatever the store.
    journal: true,
    ...(extra.onEvent ? { onEvent: extra.onEvent } : {}),
    ...(extra.logger ? { logger: extra.logger } : {}),
  });
}
