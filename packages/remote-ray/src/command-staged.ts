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
import { posix } from 'node:path';
import { checkEnvNames, gpuContextLine, gpuCount, NOT_FOUND_EXIT, NOT_FOUND_MARK, readSources, templateOf } from './command-entrypoint.js';
import type { EntrypointBuilder } from './entrypoint.js';
import { shQuote } from './quote.js';
import { commandArgs, commandContext, commandEnv, commandLaunch, commandShellSetup } from './runner-api.js';
import { stagedEntrypoint, stagedFrame } from './staged-job.js';

/** The entrypoint of a command step on a cluster without the runner's filesystem (see the module comment). */
export const stagedCommandStep: EntrypointBuilder = async (job, ctx) => {
  const step = job.spec.name;
  const f = await stagedFrame(job, ctx, 'result.json');
  const q = shQuote;
  const t = templateOf(job, f.depPaths, f.out);
  checkEnvNames(step, t);
  const sources = await readSources(step, t);
  const contextPath = posix.join(f.work, 'context.json');
  const attempt = { step, attempt: job.task.attempt, outputPath: f.out, depPaths: f.depPaths, contextPath, resultPath: f.result };
  const setup = [`printf '%s' ${q(JSON.stringify(commandContext(t, attempt)))} >${q(contextPath)} || ${f.stageFail}`];
  const run: string[] = [];
  if (gpuCount(job) > 0) run.push(gpuContextLine(contextPath, f.stageFail));
  if (sources.length > 0) run.push(`cp -R "$pkg/sources/." ${q(posix.join(f.work, 'work'))} || ${f.stageFail}`);
  run.push(`cd ${q(posix.join(f.work, 'work'))} || ${f.stageFail}`);
  for (const [k, v] of Object.entries(commandEnv(t, attempt))) run.push(`export ${k}=${q(v)}`);
  const launch = commandLaunch(t, commandArgs(t, attempt));
  run.push(...commandShellSetup(launch, q, (fix) => `{ echo ${q(`${NOT_FOUND_MARK} ${JSON.stringify(t.program)}: ${fix}`)} "on Ray node $(hostname)" >&2; exit ${NOT_FOUND_EXIT}; }`));
  const first = launch.argv[0] as string;
  run.push(`command -v ${q(first)} >/dev/null 2>&1 || { echo ${q(`${NOT_FOUND_MARK} ${JSON.stringify(first)}: not found`)} "on PATH ($PATH) in $(pwd) on Ray node $(hostname)" >&2; exit ${NOT_FOUND_EXIT}; }`);
  // Not exec: the output is uploaded after the program exits. Ray's stop signals the whole process tree.
  run.push(`${launch.argv.map(q).join(' ')}`, 'code=$?');
  const files = sources.map((s) => ({ name: `sources/${s.rel}`, data: s.bytes, mode: s.mode }));
  return stagedEntrypoint(job, ctx, f, { files, setup, run, resultName: 'result.json', reportAlways: false, program: t.program });
};
