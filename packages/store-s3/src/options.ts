/**
 * The check of an S3 store's options. They often come from a config file, where a misspelt key
 * would otherwise be ignored and the SDK's defaults used silently.
 */
import { CairnError, checkKnownKeys, describeValue } from '@cairn/core';
import type { S3StoreOptions } from './store.js';

const RETRY_KEYS = ['maxAttempts', 'baseDelayMs', 'throttleDelayMs', 'maxDelayMs'] as const;

type Check = (value: unknown, where: string) => void;

function fail(where: string, what: string): never {
  throw new CairnError('CAIRN_CONFIG', `${where} ${what}`);
}

const text: Check = (v, where) => {
  if (typeof v !== 'string' || v === '') fail(where, `must be a non-empty string, got ${describeValue(v)}.`);
};
const flag: Check = (v, where) => {
  if (typeof v !== 'boolean') fail(where, `must be true or false, got ${describeValue(v)}.`);
};
const positive: Check = (v, where) => {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) fail(where, `must be a positive number, got ${describeValue(v)}.`);
};
const object = (v: unknown, where: string, example: string): Record<string, unknown> => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(where, `must be an object such as ${example}, got ${describeValue(v)}.`);
  return v as Record<string, unknown>;
};

const CHECKS: Record<keyof S3StoreOptions, Check> = {
  endpoint: (v, where) => {
    text(v, where);
    if (!/^https?:\/\/[^/]/.test(v as string)) fail(where, `must be an http:// or https:// URL such as "http://127.0.0.1:7480", got ${describeValue(v)}.`);
  },
  region: text,
  forcePathStyle: flag,
  profile: text,
  credentials: (v, where) => {
    // Never echo a credential's value in a message: only its type.
    // Other keys are allowed: the SDK's own credential objects carry more (expiration,
    // credentialScope, and a `$source` it adds to objects it was given).
    const o = object(v, where, '{ accessKeyId, secretAccessKey }');
    for (const k of ['accessKeyId', 'secretAccessKey'] as const) if (typeof o[k] !== 'string' || o[k] === '') fail(`${where}.${k}`, `must be a non-empty string, got ${typeof o[k] === 'string' ? 'an empty string' : `a value of type ${typeof o[k]}`}.`);
    if (o.sessionToken !== undefined && typeof o.sessionToken !== 'string') fail(`${where}.sessionToken`, `must be a string, got a value of type ${typeof o.sessionToken}.`);
  },
  retry: (v, where) => {
    const o = object(v, where, '{ maxAttempts: 6, baseDelayMs: 100 }');
    checkKnownKeys(o, RETRY_KEYS, where);
    for (const k of RETRY_KEYS) if (o[k] !== undefined) positive(o[k], `${where}.${k}`);
  },
  connectTimeoutMs: positive,
  requestTimeoutMs: positive,
  maxSockets: (v, where) => {
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) fail(where, `must be a positive integer, got ${describeValue(v)}.`);
  },
  unsafeNoLeases: flag,
  cacheDir: (v, where) => {
    if (v !== false) text(v, where);
  },
  logger: (v, where) => {
    if (typeof (v as { warn?: unknown } | null)?.warn !== 'function') fail(where, `must be an object with a warn(message) function, got ${describeValue(v)}.`);
  },
  counter: (v, where) => {
    if (typeof (v as { attach?: unknown } | null)?.attach !== 'function') fail(where, `must be a RequestCounter, got ${describeValue(v)}.`);
  },
  primitives: (v, where) => {
    if (typeof (v as { objects?: unknown } | null)?.objects !== 'object') fail(where, `must be S3Primitives, got ${describeValue(v)}.`);
  },
  localRoot: text,
  checkpoints: flag,
  checkpointSyncMs: positive,
};

/**
 * Checks the options of an S3 store (`new S3Store(options)`, `s3StoreFactory(options)`,
 * `storeOptions.s3`): unknown keys are `CAIRN_UNKNOWN_OPTION` naming the nearest known one, wrong
 * types `CAIRN_CONFIG` naming the option. Credentials' values never appear in a message.
 */
export function checkS3StoreOptions(options: unknown, where = 's3 store options'): S3StoreOptions {
  if (options === undefined) return {};
  const o = object(options, `${where}:`, "{ endpoint: 'http://127.0.0.1:7480' }");
  checkKnownKeys(o, Object.keys(CHECKS), where);
  for (const [k, check] of Object.entries(CHECKS)) if (o[k] !== undefined) check(o[k], `${where}: ${k}`);
  return o as S3StoreOptions;
}
