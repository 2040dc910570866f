/** Running commands as a user's shell would: a clean environment, captured output, exit codes. */
import { spawnSync } from 'node:child_process';
import { delimiter } from 'node:path';

/** The repository this test runs in. */
export const repoRoot = new URL('../../../../', import.meta.url).pathname;

/**
 * The environment of a fresh terminal: without what npm, Nx and vitest set for this test run
 * (`npm_*`, `NX_*` task variables, `NODE_OPTIONS`, `FORCE_COLOR`, and above all the workspace's
 * `node_modules/.bin` on PATH, which would let `npx cairn` find this repository's CLI).
 */
export function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(npm_|NX_|VITEST|VITE_|TINYPOOL|INIT_CWD$|NODE_OPTIONS$|NODE_ENV$|FORCE_COLOR$|CAIRN_)/i.test(k)) continue;
    env[k] = v;
  }
  env.PATH = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((p) => !p.includes('node_modules'))
    .join(delimiter);
  Object.assign(env, { NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NX_TUI: 'false', NO_COLOR: '1' }, extra);
  return env;
}

/** One finished command. */
export interface Ran {
  readonly command: string;
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `command` with bash in `cwd`; never throws on a non-zero exit. */
export function sh(command: string, cwd: string, extra: Record<string, string> = {}, timeoutMs = 600_000): Ran {
  const r = spawnSync('bash', ['-c', command], { cwd, env: userEnv(extra), encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 << 20 });
  return { command, status: r.status, stdout: r.stdout ?? '', stderr: `${r.stderr ?? ''}${r.error ? `\n${r.error.message}` : ''}` };
}

/** A readable account of a command for assertion messages. */
export function show(r: Ran): string {
  const tail = (s: string) => s.split('\n').slice(-40).join('\n');
  return `$ ${r.command}\n(exit ${r.status})\n--- stdout\n${tail(r.stdout)}\n--- stderr\n${tail(r.stderr)}`;
}
