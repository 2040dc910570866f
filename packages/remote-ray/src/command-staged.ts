/**
 * A command step as a Ray job on a cluster that does not share the runner's filesystem
 * (`sharedFs: false`), with an S3 store (`@cairn/store-s3`). Nothing the job reads or writes is on
 * the runner's disk:
 *
 * - **Delivered with the job**: the declared sources (read once, checked against the step's
 *   identity) and the transfer script (`far/s3-transfer-py.ts`) go in a zip uploaded through the
 *   dashboard's package endpoint (`PUT /api/packages/gcs/_ray_pkg_<hash>.zip`), named by its
 *   content, so a step whose sources did not change reuses it; it becomes the job's `working_dir`.
 *   The per-attempt part (context file, paths, variables) is the entrypoint itself.
 * - **Inputs**: each dependency's committed objects are read from the bucket on the node (its
 *   record names its `@run/` prefix) into `<work>/deps/<n>`, the path the program is given.
 * - **Outputs**: after the program exits 0 the node uploads `<work>/out` to the attempt's own
 *   prefix (`{output}/@{runId}/`); the runner's commit then names it in the record as for any S3
 *   attempt. A late upload of a stopped or orphaned job stays under a prefix no record names.
 * - **Result, logs**: the program's `$CAIRN_RESULT` comes back as one marked line at the end of
 *   Ray's job log (`cairn-ray-result <base64>`); the runner reads the log once when the job ends
 *   (ray-log-result.ts), keeps it as the attempt's stdout log, and judges the exit code as for a
 *   shared-filesystem command step (command-status.ts).
 *
 * `<work>` is `<nodeTempDir>/cairn-<job>-<nonce>`, made 0700 by the job and removed when it ends.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { CairnError } from '@cairn/core';
import { checkEnvNames, gpuContextLine, gpuCount, NOT_FOUND_EXIT, NOT_FOUND_MARK, readSources, STAGE_FAILED_EXIT, templateOf, TRANSFER_FAILED_MARK } from './command-entrypoint.js';
import type { EntrypointBuilder } from './entrypoint.js';
import { S3_TRANSFER_FILE, S3_TRANSFER_PY } from './far/s3-transfer-py.js';
import { farStoreOf, parseS3Url } from './object-store.js';
import { shQuote } from './quote.js';
import { commandArgs, commandContext, commandEnv, commandLaunch, commandShellSetup } from './runner-api.js';
import type { ZipEntry } from './zip.js';

/** The package name of `files` (Ray's `_ray_pkg_<hash>.zip` form). */
export function packageName(files: readonly ZipEntry[]): string {
  const h = createHash('sha256');
  for (const f of [...files].sort((a, b) => (a.name < b.name ? -1 : 1))) h.update(`${f.name}\0${f.mode ?? 0o644}\0${f.data.length}\0`).update(f.data);
  return `_ray_pkg_${h.digest('hex').slice(0, 32)}.zip`;
}

/** The entrypoint of a command step on a cluster without the runner's filesystem (see the module comment). */
export const stagedCommandStep: EntrypointBuilder = async (job, ctx) => {
  const step = job.spec.name;
  const store = await farStoreOf(job, ctx.storeCredentials);
  const deliver = ctx.deliver;
  if (!deliver) throw new CairnError('CAIRN_EXECUTOR', `Step "${step}": no way to deliver the step's files to the Ray nodes.`, { step });
  const q = shQuote;
  const work = posix.join(ctx.nodeTempDir, `cairn-${job.jobKey.replace(/[^A-Za-z0-9._-]/g, '_')}-${randomBytes(4).toString('hex')}`);
  const farDeps: Record<string, string> = {};
  const fetches: string[] = [];
  let n = 0;
  for (const [key, url] of Object.entries(job.task.depPaths)) {
    const at = parseS3Url(url);
    if (at === undefined) throw new CairnError('CAIRN_EXECUTOR', `Step "${step}": its dependency ${key} is at ${url}, which a Ray node without the runner's filesystem cannot read; only s3:// outputs can be read there.`, { step });
    const local = posix.join(work, 'deps', String(n++));
    farDeps[key] = local;
    fetches.push(`"$py" "$pkg/${S3_TRANSFER_FILE}" fetch ${q(at.bucket)} ${q(at.dir)} ${q(local)} || { echo ${q(`${TRANSFER_FAILED_MARK} cannot read the dependency ${url} of step "${step}" from the bucket`)} >&2; exit ${STAGE_FAILED_EXIT}; }`);
  }
  const out = posix.join(work, 'out');
  const t = templateOf(job, farDeps, out);
  checkEnvNames(step, t);
  const sources = await readSources(step, t);
  const files: ZipEntry[] = [{ name: S3_TRANSFER_FILE, data: Buffer.from(S3_TRANSFER_PY), mode: 0o644 }, ...sources.map((s) => ({ name: `sources/${s.rel}`, data: s.bytes, mode: s.mode }))];
  const workingDir = await deliver(packageName(files), files);

  // The runner's side of the attempt: Ray's log lands in the stdout log, the result beside it.
  await mkdir(job.attemptDir, { recursive: true });
  const resultPath = join(job.attemptDir, 'result.json');
  await rm(resultPath, { force: true });
  for (const p of [job.logPaths.stdout, job.logPaths.stderr]) await mkdir(dirname(p), { recursive: true });

  const contextPath = posix.join(work, 'context.json');
  const farResult = posix.join(work, 'result.json');
  const attempt = { step, attempt: job.task.attempt, outputPath: out, depPaths: farDeps, contextPath, resultPath: farResult };
  const stageFail = `exit ${STAGE_FAILED_EXIT}`;
  const lines = [
    'pkg=$(pwd)',
    `py=$(command -v python3 || command -v python) || { echo "cairn: no python3 on Ray node $(hostname): a job without the runner's filesystem moves its files with it" >&2; exit ${NOT_FOUND_EXIT}; }`,
    // The work directory is the job's alone (0700); the program keeps the node's umask.
    'mask=$(umask); umask 077',
    `mkdir -p ${q(out)} ${q(posix.join(work, 'work'))} || ${stageFail}`,
    'umask "$mask"',
    `trap 'cd /; rm -rf ${q(work).replace(/'/g, `'\\''`)}' EXIT`,
    // A stopped job (Ray's SIGTERM) still removes its directory.
    "trap 'exit 143' TERM INT",
    ...Object.entries(store.where).map(([k, v]) => `export ${k}=${q(v)}`),
    `printf '%s' ${q(JSON.stringify(commandContext(t, attempt)))} >${q(contextPath)} || ${stageFail}`,
    ...fetches,
  ];
  if (gpuCount(job) > 0) lines.push(gpuContextLine(contextPath, stageFail));
  if (sources.length > 0) lines.push(`cp -R "$pkg/sources/." ${q(posix.join(work, 'work'))} || ${stageFail}`);
  lines.push(`cd ${q(posix.join(work, 'work'))} || ${stageFail}`);
  for (const [k, v] of Object.entries(commandEnv(t, attempt))) lines.push(`export ${k}=${q(v)}`);
  const launch = commandLaunch(t, commandArgs(t, attempt));
  lines.push(...commandShellSetup(launch, q, (fix) => `{ echo ${q(`${NOT_FOUND_MARK} ${JSON.stringify(t.program)}: ${fix}`)} "on Ray node $(hostname)" >&2; exit ${NOT_FOUND_EXIT}; }`));
  const first = launch.argv[0] as string;
  lines.push(`command -v ${q(first)} >/dev/null 2>&1 || { echo ${q(`${NOT_FOUND_MARK} ${JSON.stringify(first)}: not found`)} "on PATH ($PATH) in $(pwd) on Ray node $(hostname)" >&2; exit ${NOT_FOUND_EXIT}; }`);
  // Not exec: the output is uploaded after the program exits. Ray's stop signals the whole process tree.
  lines.push(`${launch.argv.map(q).join(' ')}`, 'code=$?');
  lines.push(`if [ "$code" -eq 0 ]; then "$py" "$pkg/${S3_TRANSFER_FILE}" put ${q(out)} ${q(store.bucket)} ${q(store.attemptPrefix)} || { echo ${q(`${TRANSFER_FAILED_MARK} cannot upload the output of step "${step}" to s3://${store.bucket}/${store.attemptPrefix}`)} >&2; ${stageFail}; }; "$py" "$pkg/${S3_TRANSFER_FILE}" report ${q(farResult)}; fi`);
  lines.push('exit "$code"');
  return { command: `${lines.join('\n')}\n`, resultPath, program: t.program, workingDir, envVars: store.credentials, resultFromLogs: true };
};
