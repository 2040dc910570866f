/** Checks the `secrets` option (pure): provider shapes. A file's mode is checked when it is read. */
import { CairnError, checkKnownKeys, describeValue } from '@cairn/core';
import type { SecretsOptions } from './types.js';

function fail(where: string, what: string): never {
  throw new CairnError('CAIRN_CONFIG', `${where} ${what}`);
}

/** Checks `secrets` (`where` names the option); returns it unchanged. */
export function checkSecretsOptions(value: unknown, where: string): SecretsOptions {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(where, `must be an object such as { providers: [{ type: 'env' }, { type: 'file', path: '~/.cairn/secrets' }] }, got ${describeValue(value)}.`);
  checkKnownKeys(value, ['providers'], where);
  const providers = (value as { providers?: unknown }).providers;
  if (!Array.isArray(providers)) fail(`${where}.providers`, `must be a list of providers ({ type: 'env' }, { type: 'file', path }, { type: 'command', command }), got ${describeValue(providers)}.`);
  providers.forEach((p: unknown, i) => {
    const at = `${where}.providers[${i}]`;
    if (typeof p !== 'object' || p === null) fail(at, `must be { type: 'env' }, { type: 'file', path } or { type: 'command', command }, got ${describeValue(p)}.`);
    const o = p as Record<string, unknown>;
    if (o.type === 'env') {
      checkKnownKeys(o, ['type', 'prefix'], at);
      if (o.prefix !== undefined && typeof o.prefix !== 'string') fail(`${at}.prefix`, `must be a string, got ${describeValue(o.prefix)}.`);
    } else if (o.type === 'file') {
      checkKnownKeys(o, ['type', 'path'], at);
      if (typeof o.path !== 'string' || o.path === '') fail(`${at}.path`, `must be the path of a NAME=value file, got ${describeValue(o.path)}.`);
    } else if (o.type === 'command') {
      checkKnownKeys(o, ['type', 'command', 'timeoutMs'], at);
      const c = o.command;
      if (!Array.isArray(c) || c.length === 0 || !c.every((a) => typeof a === 'string') || c[0] === '') fail(`${at}.command`, `must be a program and its arguments, such as ['pass', 'show'] (the secret's name is appended), got ${describeValue(c)}.`);
      if (o.timeoutMs !== undefined && (typeof o.timeoutMs !== 'number' || !(o.timeoutMs > 0))) fail(`${at}.timeoutMs`, `must be a positive number of milliseconds, got ${describeValue(o.timeoutMs)}.`);
    } else fail(`${at}.type`, `must be "env", "file" or "command", got ${describeValue(o.type)}.`);
  });
  return value as SecretsOptions;
}
