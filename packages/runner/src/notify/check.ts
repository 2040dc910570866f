/**
 * Checks the `notify` option (pure): sink shapes, timeouts, and that a webhook URL is http(s)
 * (`CAIRN_NOTIFY_URL`) — refused when the options are checked, not at the first failure.
 */
import { CairnError, checkKnownKeys, describeValue } from '@cairn/core';
import type { NotifyOptions } from './types.js';

const EVENT_TYPES: readonly string[] = ['run-end', 'step-failed', 'step-slow'];
const COMMAND_KEYS: readonly string[] = ['type', 'command', 'on', 'timeoutMs'];
const WEBHOOK_KEYS: readonly string[] = ['type', 'url', 'format', 'headers', 'retries', 'backoffMs', 'on', 'timeoutMs'];
/** The longest delay a Node timer honours (2^31-1 ms); a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

function fail(where: string, what: string): never {
  throw new CairnError('CAIRN_CONFIG', `${where} ${what}`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function ms(v: unknown, where: string): void {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0 || v > MAX_TIMER_MS) fail(where, `must be a positive number of milliseconds (at most ${MAX_TIMER_MS}), got ${describeValue(v)}.`);
}

/** Checks a webhook URL: `CAIRN_NOTIFY_URL` unless it parses as an `http:` or `https:` URL. */
export function checkWebhookUrl(url: unknown, where: string): void {
  let scheme: string | undefined;
  try {
    scheme = typeof url === 'string' ? new URL(url).protocol : undefined;
  } catch {
    scheme = undefined;
  }
  if (scheme !== 'http:' && scheme !== 'https:') {
    // The URL itself is not quoted: a webhook URL often carries its token.
    const what = typeof url === 'string' ? (scheme === undefined ? 'is not a URL' : `uses ${scheme}`) : `is ${describeValue(url)}`;
    throw new CairnError('CAIRN_NOTIFY_URL', `${where} ${what}; a webhook must be an http:// or https:// URL, such as https://hooks.slack.com/services/….`);
  }
}

/** Checks `notify` (`where` names the option, e.g. `new StepRunner(): notify`); returns it unchanged. */
export function checkNotifyOptions(value: unknown, where: string): NotifyOptions {
  if (!isObject(value)) fail(where, `must be an object such as { sinks: [{ type: 'webhook', url: 'https://…', format: 'slack' }] }, got ${describeValue(value)}.`);
  checkKnownKeys(value, ['sinks', 'slowStepMs'], where);
  if (value.slowStepMs !== undefined) ms(value.slowStepMs, `${where}.slowStepMs`);
  if (!Array.isArray(value.sinks)) fail(`${where}.sinks`, `must be a list of sinks ({ type: 'command', command } or { type: 'webhook', url }), got ${describeValue(value.sinks)}.`);
  value.sinks.forEach((sink: unknown, i) => {
    const at = `${where}.sinks[${i}]`;
    if (!isObject(sink)) fail(at, `must be { type: 'command', command } or { type: 'webhook', url }, got ${describeValue(sink)}.`);
    if (sink.type === 'command') {
      checkKnownKeys(sink, COMMAND_KEYS, at);
      const c = sink.command;
      const ok = typeof c === 'string' ? c.trim() !== '' : Array.isArray(c) && c.length > 0 && c.every((a) => typeof a === 'string') && c[0] !== '';
      if (!ok) fail(`${at}.command`, `must be a program with its arguments (['/usr/local/bin/notify', '--json']) or a shell command string, got ${describeValue(c)}.`);
    } else if (sink.type === 'webhook') {
      checkKnownKeys(sink, WEBHOOK_KEYS, at);
      checkWebhookUrl(sink.url, `${at}.url`);
      if (sink.format !== undefined && sink.format !== 'json' && sink.format !== 'slack') fail(`${at}.format`, `must be "json" (the event itself) or "slack" ({ text }), got ${describeValue(sink.format)}.`);
      if (sink.headers !== undefined && (!isObject(sink.headers) || Object.values(sink.headers).some((h) => typeof h !== 'string'))) fail(`${at}.headers`, `must be an object of header strings, got ${describeValue(sink.headers)}.`);
      if (sink.retries !== undefined && (typeof sink.retries !== 'number' || !Number.isInteger(sink.retries) || sink.retries < 0)) fail(`${at}.retries`, `must be a non-negative integer, got ${describeValue(sink.retries)}.`);
      if (sink.backoffMs !== undefined) ms(sink.backoffMs, `${at}.backoffMs`);
    } else {
      fail(`${at}.type`, `must be "command" or "webhook", got ${describeValue(sink.type)}.`);
    }
    if (sink.timeoutMs !== undefined) ms(sink.timeoutMs, `${at}.timeoutMs`);
    if (sink.on !== undefined) {
      if (!Array.isArray(sink.on) || sink.on.some((e) => !EVENT_TYPES.includes(e as string))) fail(`${at}.on`, `must list events among ${EVENT_TYPES.map((e) => `"${e}"`).join(', ')}, got ${describeValue(sink.on)}.`);
    }
  });
  return value as unknown as NotifyOptions;
}
