/**
 * A step's secrets on Ray, only with `secrets: 'shared-file'`: a 0600 file in the step's attempt
 * directory (made 0700) on the filesystem the Ray nodes share with the runner, which the
 * entrypoint sources and deletes before the step starts. Never in the entrypoint (Ray shows it in
 * the dashboard, and `sh -c` puts it on a command line) nor in `runtime_env` (the dashboard and
 * the Jobs API show its `env_vars` to whoever can reach them). Every Ray job runs as the Ray
 * nodes' one OS user, so another job on the cluster could read the file in the moments before
 * the step starts: hence opt-in, for clusters whose every user may see the secret (README, "Secrets").
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { shQuote } from './quote.js';
import { SECRETS_FILE, secretsFileText, secretVars, type JobRequest } from './runner-api.js';

/** Writes `job`'s secrets file (when it needs secrets); returns the entrypoint line that reads and deletes it, or '' for none. */
export async function prepareSecrets(job: JobRequest): Promise<string> {
  const vars = secretVars(job.task, job.secrets);
  if (vars === undefined) return '';
  await mkdir(job.attemptDir, { recursive: true, mode: 0o700 });
  await chmod(job.attemptDir, 0o700);
  const file = join(job.attemptDir, SECRETS_FILE);
  await writeFile(file, secretsFileText(vars, job.spec.name), { mode: 0o600 });
  await chmod(file, 0o600);
  const q = shQuote(file);
  // `.` is a builtin: no value becomes an argument.
  return `if [ -f ${q} ]; then . ${q}; rm -f ${q}; fi`;
}
