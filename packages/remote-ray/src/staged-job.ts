/**
 * The frame every step kind shares on a Ray node without the runner's filesystem (see
 * command-staged.ts for the flow): the job's own 0700 work directory `<work>`, removed when it ends;
 * its dependencies read from the bucket into `<work>/deps/<n>`; its output dir `<work>/out`, uploaded
 * to the attempt's prefix when the step succeeded; its result file reported as the marked line of
 * Ray's job log; and the content-named package (the kind's files plus the transfer script) the job
 * runs in. A kind (command-staged.ts, worker-staged.ts) adds only its own files and lines.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { CairnError } from '@cairn/core';
import { NOT_FOUND_EXIT, STAGE_FAILED_EXIT, TRANSFER_FAILED_MARK } from './command-entrypoint.js';
import type { EntrypointContext, JobEntrypoint } from './entrypoint.js';
import { S3_TRANSFER_FILE, S3_TRANSFER_PY } from './far/s3-transfer-py.js';
import { farStoreOf, parseS3Url, type FarStore } from './object-store.js';
import { shQuote } from './quote.js';
import type { JobRequest } from './runner-api.js';
import type { ZipEntry } from './zip.js';

/** The package name of `files` (Ray's `_ray_pkg_<hash>.zip` form). */
export function packageName(files: readonly ZipEntry[]): string {
  const h = createHash('sha256');
  for (const f of [...files].sort((a, b) => (a.name < b.name ? -1 : 1))) h.update(`${f.name}\0${f.mode ?? 0o644}\0${f.data.length}\0`).update(f.data);
  return `_ray_pkg_${h.digest('hex').slice(0, 32)}.zip`;
}

/** Where a staged job keeps its files on the node. */
export interface StagedFrame {
  /** The step's name. */
  readonly step: string;
  /** The job's work directory on the node. */
  readonly work: string;
  /** The step's output directory on the node (`<work>/out`), uploaded when it succeeds. */
  readonly out: string;
  /** Each dependency's directory on the node, by key (as `task.depPaths`). */
  readonly depPaths: Readonly<Record<string, string>>;
  /** The result file on the node, reported on the job's log when the job ends. */
  readonly result: string;
  /** The shell line that ends the job as "its files are not what it needs". */
  readonly stageFail: string;
  /** The store the node reads and writes. */
  readonly store: FarStore;
  /** The lines that read the dependencies from the bucket. */
  readonly fetches: readonly string[];
}

/** What a step kind adds to the frame. */
export interface StagedKind {
  /** Files for the package, beside the transfer script. */
  readonly files: readonly ZipEntry[];
  /** Lines run once `<work>` exists, before the dependencies are read. */
  readonly setup: readonly string[];
  /** Lines that run the step and leave its exit code in `$code` (cwd: the package). */
  readonly run: readonly string[];
  /** The result file's name in the runner's attempt directory (`result.json`, `result.msgpack`). */
  readonly resultName: string;
  /** The result file is reported whatever the exit code (a worker writes its error there), not only on success. */
  readonly reportAlways: boolean;
  /** A command step's program (see JobEntrypoint.program). */
  readonly program?: string | undefined;
}

/** The frame of `job` on a node: its work directory, where its dependencies and output go. */
export async function stagedFrame(job: JobRequest, ctx: EntrypointContext, resultName: string): Promise<StagedFrame> {
  const step = job.spec.name;
  const store = await farStoreOf(job, ctx.storeCredentials);
  const q = shQuote;
  const work = posix.join(ctx.nodeTempDir, `cairn-${job.jobKey.replace(/[^A-Za-z0-9._-]/g, '_')}-${randomBytes(4).toString('hex')}`);
  const depPaths: Record<string, string> = {};
  const fetches: string[] = [];
  let n = 0;
  for (const [key, url] of Object.entries(job.task.depPaths)) {
    const at = parseS3Url(url);
    if (at === undefined) throw new CairnError('CAIRN_EXECUTOR', `Step "${step}": its dependency ${key} is at ${url}, which a Ray node without the runner's filesystem cannot read; only s3:// outputs can be read there.`, { step });
    const local = posix.join(work, 'deps', String(n++));
    depPaths[key] = local;
    fetches.push(`"$py" "$pkg/${S3_TRANSFER_FILE}" fetch ${q(at.bucket)} ${q(at.dir)} ${q(local)} || { echo ${q(`${TRANSFER_FAILED_MARK} cannot read the dependency ${url} of step "${step}" from the bucket`)} >&2; exit ${STAGE_FAILED_EXIT}; }`);
  }
  return { step, work, out: posix.join(work, 'out'), depPaths, result: posix.join(work, resultName), stageFail: `exit ${STAGE_FAILED_EXIT}`, store, fetches };
}

/** The job's entrypoint: the frame around `kind`'s lines, its package delivered (see the module comment). */
export async function stagedEntrypoint(job: JobRequest, ctx: EntrypointContext, f: StagedFrame, kind: StagedKind): Promise<JobEntrypoint> {
  const { step, store, stageFail } = f;
  const deliver = ctx.deliver;
  if (!deliver) throw new CairnError('CAIRN_EXECUTOR', `Step "${step}": no way to deliver the step's files to the Ray nodes.`, { step });
  const files: ZipEntry[] = [{ name: S3_TRANSFER_FILE, data: Buffer.from(S3_TRANSFER_PY), mode: 0o644 }, ...kind.files];
  const workingDir = await deliver(packageName(files), files);

  // The runner's side of the attempt: Ray's log lands in the stdout log, the result beside it.
  await mkdir(job.attemptDir, { recursive: true });
  const resultPath = join(job.attemptDir, kind.resultName);
  await rm(resultPath, { force: true });
  for (const p of [job.logPaths.stdout, job.logPaths.stderr]) await mkdir(dirname(p), { recursive: true });

  const q = shQuote;
  const upload = `"$py" "$pkg/${S3_TRANSFER_FILE}" put ${q(f.out)} ${q(store.bucket)} ${q(store.attemptPrefix)} || { echo ${q(`${TRANSFER_FAILED_MARK} cannot upload the output of step "${step}" to s3://${store.bucket}/${store.attemptPrefix}`)} >&2; ${stageFail}; }`;
  const report = `"$py" "$pkg/${S3_TRANSFER_FILE}" report ${q(f.result)}`;
  const lines = [
    'pkg=$(pwd)',
    `py=$(command -v python3 || command -v python) || { echo "cairn: no python3 on Ray node $(hostname): a job without the runner's filesystem moves its files with it" >&2; exit ${NOT_FOUND_EXIT}; }`,
    // The work directory is the job's alone (0700); the step keeps the node's umask.
    'mask=$(umask); umask 077',
    `mkdir -p ${q(f.out)} ${q(posix.join(f.work, 'work'))} || ${stageFail}`,
    'umask "$mask"',
    `trap 'cd /; rm -rf ${q(f.work).replace(/'/g, `'\\''`)}' EXIT`,
    // A stopped job (Ray's SIGTERM) still removes its directory.
    "trap 'exit 143' TERM INT",
    ...Object.entries(store.where).map(([k, v]) => `export ${k}=${q(v)}`),
    ...kind.setup,
    ...f.fetches,
    ...kind.run,
    kind.reportAlways ? `if [ "$code" -eq 0 ]; then ${upload}; fi; ${report}` : `if [ "$code" -eq 0 ]; then ${upload}; ${report}; fi`,
    'exit "$code"',
  ];
  return { command: `${lines.join('\n')}\n`, resultPath, workingDir, envVars: store.credentials, resultFromLogs: true, ...(kind.program !== undefined ? { program: kind.program } : {}) };
}
