/** The runtime environment of one job: the executor's, with the step's merged over it, in Ray's names. */
import type { RayRuntimeEnv } from './options.js';

/** Ray's `runtime_env` for `base` with `step` merged over it (`envVars` key by key); undefined when empty. */
export function runtimeEnvOf(base: RayRuntimeEnv, step: RayRuntimeEnv | undefined): Record<string, unknown> | undefined {
  const workingDir = step?.workingDir ?? base.workingDir;
  const envVars = { ...base.envVars, ...step?.envVars };
  const pip = step?.pip ?? base.pip;
  const out: Record<string, unknown> = {
    ...(workingDir !== undefined ? { working_dir: workingDir } : {}),
    ...(Object.keys(envVars).length > 0 ? { env_vars: envVars } : {}),
    ...(pip !== undefined && pip.length > 0 ? { pip: [...pip] } : {}),
  };
  return Object.keys(out).length > 0 ? out : undefined;
}

/** `env` with the package a builder delivered as its `working_dir` and the builder's variables merged into its `env_vars`. */
export function withDelivered(env: Record<string, unknown> | undefined, workingDir: string | undefined, envVars: Readonly<Record<string, string>> | undefined): Record<string, unknown> | undefined {
  if (workingDir === undefined && envVars === undefined) return env;
  return {
    ...env,
    ...(workingDir === undefined ? {} : { working_dir: workingDir }),
    ...(envVars === undefined ? {} : { env_vars: { ...(env?.env_vars as Record<string, string> | undefined), ...envVars } }),
  };
}
