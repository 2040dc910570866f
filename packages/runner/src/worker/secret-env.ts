/**
 * How the `process` executor hands a step its secrets: in the worker's environment only, as
 * `CAIRN_SECRET_<NAME>` (never on its command line or in its task file). The worker takes them
 * out of its environment before the step runs, so programs the step starts do not inherit them
 * unless the step passes them on (a command step's declared `env`).
 */

/** The prefix of a secret's variable in a worker's environment. */
export const SECRET_ENV_PREFIX = 'CAIRN_SECRET_';

/** The environment entries that carry `secrets` to a worker. */
export function secretEnv(secrets: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (secrets !== undefined) for (const [name, value] of Object.entries(secrets)) out[SECRET_ENV_PREFIX + name] = value;
  return out;
}

/** The secrets in this process's environment, by name, removed from it. */
export function takeSecretEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of Object.keys(process.env)) {
    if (!key.startsWith(SECRET_ENV_PREFIX)) continue;
    out[key.slice(SECRET_ENV_PREFIX.length)] = process.env[key] as string;
    delete process.env[key];
  }
  return out;
}

/** `env` without any `CAIRN_SECRET_*` entry (a worker gets its own step's secrets only). */
export function withoutSecretEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) if (!k.startsWith(SECRET_ENV_PREFIX)) out[k] = v;
  return out;
}
