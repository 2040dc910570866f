/**
 * Handing a step its secrets on another host, written once for every remote executor: which
 * variables carry them, and the one file format that carries those variables across.
 *
 * A worker step (run by Node) gets `CAIRN_SECRET_<NAME>` (the worker entry takes them out of its
 * environment before the step runs, worker/secret-env.ts); a command step gets the variables its
 * `env` maps to `secret('NAME')`. The file is shell `export NAME='value'` lines: a POSIX shell
 * reads it with `.` (a builtin: no value is ever an argument, so `ps` never shows one), and a Node
 * worker with {@link takeSecretsFile}. Whoever reads it deletes it before the step starts.
 */
import { readFileSync, rmSync } from 'node:fs';
import { CairnError, COMMAND_MODULE, type TaskPayload } from '@cairn/core';
import { taggedSecretName } from '@cairn/core/internal';
import { SECRET_ENV_PREFIX } from '../worker/secret-env.js';

/** The name of the secrets file in an attempt's (or job's) directory. */
export const SECRETS_FILE = 'secrets.sh';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The variables of a command template's `env` that are secrets: variable → secret name. */
export function commandSecretEnv(template: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  const env = isRecord(template) ? template.env : undefined;
  if (isRecord(env)) {
    for (const [k, v] of Object.entries(env)) {
      const name = taggedSecretName(v);
      if (name !== undefined) out[k] = name;
    }
  }
  return out;
}

/**
 * A command template without the secrets in its `env` (what a host that runs the program from
 * a script reads: the secrets come from the secrets file). `template` itself when it has none.
 */
export function stripSecretEnv(template: unknown): unknown {
  const secretVars = commandSecretEnv(template);
  if (Object.keys(secretVars).length === 0) return template;
  const t = template as Record<string, unknown>;
  const env: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(t.env as Record<string, unknown>)) if (!(k in secretVars)) env[k] = v;
  return { ...t, env };
}

/**
 * The variables that carry `secrets` to the step of `task` (undefined when it needs none):
 * `CAIRN_SECRET_<NAME>` for a worker step, the `env` variables of a command step.
 * `CAIRN_SECRET_UNRESOLVED` when a command's secret was not handed over.
 */
export function secretVars(task: TaskPayload, secrets: Readonly<Record<string, string>> | undefined): Record<string, string> | undefined {
  if (secrets === undefined) return undefined;
  const out: Record<string, string> = {};
  if (task.ref.module === COMMAND_MODULE) {
    for (const [k, name] of Object.entries(commandSecretEnv(task.inputs))) {
      const v = secrets[name];
      if (v === undefined) throw new CairnError('CAIRN_SECRET_UNRESOLVED', `Step "${task.name}" needs secret ${name}, which was not handed to it; run it with a runner whose secret providers resolve ${name}.`, { step: task.name });
      out[k] = v;
    }
  } else for (const [name, v] of Object.entries(secrets)) out[SECRET_ENV_PREFIX + name] = v;
  return Object.keys(out).length === 0 ? undefined : out;
}

const quote = (s: string): string => `'${s.replaceAll("'", `'\\''`)}'`;

/** The secrets file's text for `vars` (a value with a NUL byte cannot be a variable: `CAIRN_CONFIG`). */
export function secretsFileText(vars: Readonly<Record<string, string>>, step: string): string {
  let text = '';
  for (const [k, v] of Object.entries(vars)) {
    if (v.includes('\0')) throw new CairnError('CAIRN_CONFIG', `Step "${step}": the value of ${k} contains a NUL byte, which no environment variable can hold; fix the secret.`, { step });
    text += `export ${k}=${quote(v)}\n`;
  }
  return text;
}

const LINE = /export ([A-Za-z_][A-Za-z0-9_]*)='((?:[^']|'\\'')*)'\n/gy;

/** Parses a secrets file's text (exactly what {@link secretsFileText} writes). */
export function parseSecretsFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  LINE.lastIndex = 0;
  let m: RegExpExecArray | null;
  let end = 0;
  while ((m = LINE.exec(text)) !== null) {
    out[m[1] as string] = (m[2] as string).replaceAll(`'\\''`, "'");
    end = LINE.lastIndex;
  }
  if (end !== text.length) throw new CairnError('CAIRN_CONFIG', `A secrets file is malformed at byte ${end}; it is written by the runner only.`);
  return out;
}

/**
 * Reads and deletes the secrets file at `path`: the step's secrets by name (the
 * `CAIRN_SECRET_<NAME>` variables of a worker step), `{}` when there is none.
 */
export function takeSecretsFile(path: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  } finally {
    rmSync(path, { force: true });
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(parseSecretsFile(text))) if (k.startsWith(SECRET_ENV_PREFIX)) out[k.slice(SECRET_ENV_PREFIX.length)] = v;
  return out;
}
