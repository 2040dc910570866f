/**
 * A command step (`task.ref.module === COMMAND_MODULE`) as a Ray job: the entrypoint is a POSIX
 * shell script (Ray runs it with `sh -c`) that starts the step's program itself, so the Ray node
 * needs no Node.js and no Cairn, only `sh` and the program.
 *
 * Prepared on the runner's host, in the attempt directory, which the Ray nodes share with the
 * runner (the store's filesystem): the context file (`context.json`, from the runner's own
 * `commandContext`), and a snapshot of each declared source (`sources/<rel>`), read once,
 * checked against the hash the step's identity was made from. On the node, the script:
 * 1. sends its own and the program's stdout/stderr to the attempt's log files (live for `cairn logs -f`);
 * 2. when the step asked for GPUs, adds the slots Ray gave it (`CUDA_VISIBLE_DEVICES`, which Ray
 *    sets and Cairn leaves alone) to the context file as `gpuIndices`;
 * 3. picks the working directory: the step's project directory (`cwd`) when the node sees it
 *    with every declared source in it — each compared with the snapshot, so a source edited
 *    while the job waited fails the step (`CAIRN_COMMAND_SOURCE`) instead of running content
 *    its identity does not cover — else a fresh `work/` directory in the attempt directory with
 *    the snapshots copied in under their relative paths;
 * 4. exports the step's `env` and `CAIRN_*`, checks the program can be found, and `exec`s it
 *    (so Ray's stop signals the program itself, then every process it started).
 * Every value in the script is single-quoted.
 */
import { chmod, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { CairnError, getBackend, resolveTemplate, type CommandTemplate } from '@cairn/core';
import { commandArgs, commandContext, commandEnv, commandLaunch, commandShellSetup, fetchJobDeps, readTemplate, stripSecretEnv, type JobRequest } from './runner-api.js';
import { prepareSecrets } from './secrets.js';
import type { EntrypointBuilder } from './entrypoint.js';
import { shQuote } from './quote.js';

/** Exit code of the script when the step's files are not what it needs (before the program starts). */
export const STAGE_FAILED_EXIT = 125;
/** Exit code of the script when the program (or the attempt directory) cannot be found. */
export const NOT_FOUND_EXIT = 127;
/** The start of the line the script writes when the program cannot be found. */
export const NOT_FOUND_MARK = 'cairn: cannot start';
/** The start of the line the script writes when the node could not read a dependency from, or upload the output to, the object store (without a shared filesystem). */
export const TRANSFER_FAILED_MARK = 'cairn: store transfer failed:';
/** The start of the line the script writes when a declared source changed in the project. */
export const SOURCE_CHANGED_MARK = 'cairn: declared source';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Refuses an environment variable name the POSIX shell cannot set (`CAIRN_INVALID_SPEC`). */
export function checkEnvNames(step: string, t: CommandTemplate): void {
  for (const k of Object.keys(t.env)) {
    if (!ENV_NAME.test(k)) throw new CairnError('CAIRN_INVALID_SPEC', `Step "${step}": environment variable name ${JSON.stringify(k)} cannot be set by the POSIX shell that starts the program on a Ray node; use letters, digits and _ (not first a digit).`, { step });
  }
}

/** The line that adds the GPU slots Ray gave the job (`CUDA_VISIBLE_DEVICES`) to the context file as `gpuIndices`; `fail` ends the script. */
export function gpuContextLine(contextPath: string, fail: string): string {
  const q = shQuote;
  return `case "\${CUDA_VISIBLE_DEVICES-}" in ''|*[!0-9,]*) ;; *) { printf '{"gpuIndices":[%s],' "$CUDA_VISIBLE_DEVICES" && tail -c +2 ${q(contextPath)}; } >${q(`${contextPath}.gpu`)} && mv -f ${q(`${contextPath}.gpu`)} ${q(contextPath)} || ${fail};; esac`;
}

/** The number of GPUs `job` asks for. */
export function gpuCount(job: JobRequest): number {
  return typeof job.resources.gpus === 'number' ? job.resources.gpus : (job.resources.gpus?.count ?? 0);
}

/** The step's template, resolved with its dependencies' (`depPaths`) and its own output (`outputPath`) paths. */
export function templateOf(job: JobRequest, depPaths: Readonly<Record<string, string>>, outputPath = job.task.outputPath): CommandTemplate {
  const { task } = job;
  // Secrets in its env come from the secrets file (secrets.ts), never from the entrypoint.
  return readTemplate(task.name, stripSecretEnv(resolveTemplate(task.inputs, task.depKeys, outputPath, depPaths, task.name)));
}

/** One declared source, read once and checked against the step's identity. */
export interface SourceSnapshot {
  /** Its path relative to the step's project directory. */
  readonly rel: string;
  /** Its content. */
  readonly bytes: Buffer;
  /** Its permission bits (at least owner-readable). */
  readonly mode: number;
}

/** Reads each declared source once and checks it against the hash the step's identity was made from. */
export async function readSources(step: string, t: CommandTemplate): Promise<SourceSnapshot[]> {
  const out: SourceSnapshot[] = [];
  for (const [rel, want] of Object.entries(t.sources)) {
    const from = join(t.cwd, rel);
    let bytes: Buffer;
    let mode: number;
    try {
      [bytes, mode] = await Promise.all([readFile(from), stat(from).then((s) => s.mode & 0o777)]);
    } catch (cause) {
      throw new CairnError('CAIRN_COMMAND_SOURCE', `Step "${step}": declared source ${rel} cannot be read at ${from} (${(cause as Error).message}); restore it, or run where the project is.`, { step, cause });
    }
    const got = getBackend().xxh64Hex(bytes);
    if (got !== want) {
      throw new CairnError('CAIRN_COMMAND_SOURCE', `Step "${step}": ${rel} changed after the pipeline was declared (content hash ${got}, declared with ${want}); run the pipeline again so its identity covers the new content.`, { step });
    }
    out.push({ rel, bytes, mode: mode | 0o400 });
  }
  return out;
}

/** Writes the snapshot of each declared source under `dir`. */
async function snapshotSources(step: string, t: CommandTemplate, dir: string): Promise<void> {
  for (const { rel, bytes, mode } of await readSources(step, t)) {
    const copy = join(dir, rel);
    await mkdir(dirname(copy), { recursive: true });
    await writeFile(copy, bytes);
    await chmod(copy, mode);
  }
}

/** The entrypoint of a command step (see the module comment). */
export const commandStep: EntrypointBuilder = async (job) => {
  const step = job.spec.name;
  // Dependencies on an object store are fetched on the runner's host into the store's local directory, which the nodes share.
  const depPaths = await fetchJobDeps(job.task.depPaths, job.storeAccess);
  const t = templateOf(job, depPaths);
  checkEnvNames(step, t);
  const dir = job.attemptDir;
  const snapshots = join(dir, 'sources');
  const work = join(dir, 'work');
  const contextPath = join(dir, 'context.json');
  const resultPath = join(dir, 'result.json');
  await mkdir(dir, { recursive: true });
  await rm(resultPath, { force: true });
  for (const p of [job.logPaths.stdout, job.logPaths.stderr]) await mkdir(dirname(p), { recursive: true });
  if (posix.isAbsolute(job.outputPath)) await mkdir(job.outputPath, { recursive: true });
  await snapshotSources(step, t, snapshots);
  // gpuIndices are added on the node, from the slots Ray assigns (step 2 of the script).
  // Reading task.checkpointDir opens the step's checkpoint directory (on the shared store, beside the output).
  const checkpointDir = job.task.checkpointDir;
  const attempt = { step, attempt: job.task.attempt, outputPath: job.outputPath, depPaths, contextPath, resultPath, ...(checkpointDir === undefined ? {} : { checkpointDir }) };
  await writeFile(contextPath, JSON.stringify(commandContext(t, attempt)));

  const q = shQuote;
  const gpus = gpuCount(job);
  const stageFail = `exit ${STAGE_FAILED_EXIT}`;
  const lines = [
    `[ -d ${q(dir)} ] || { echo "cairn: Ray node $(hostname) does not see the attempt directory "${q(dir)}": the Ray nodes must share the store's filesystem with the runner" >&2; exit ${NOT_FOUND_EXIT}; }`,
    `exec >>${q(job.logPaths.stdout)} 2>>${q(job.logPaths.stderr)} || exit ${NOT_FOUND_EXIT}`,
  ];
  const secrets = await prepareSecrets(job);
  if (secrets !== '') lines.push(secrets);
  if (gpus > 0) {
    lines.push(gpuContextLine(contextPath, stageFail));
  }
  const rels = Object.keys(t.sources);
  const inProject = [`[ -d ${q(t.cwd)} ]`, ...rels.map((rel) => `[ -f ${q(join(t.cwd, rel))} ]`)].join(' && ');
  lines.push(`if ${inProject}; then`);
  for (const rel of rels) {
    const message = `${SOURCE_CHANGED_MARK} ${rel} of step "${step}" changed in ${t.cwd} after the pipeline was declared; run the pipeline again so its identity covers the new content`;
    lines.push(`  cmp -s ${q(join(snapshots, rel))} ${q(join(t.cwd, rel))} || { echo ${q(message)} >&2; ${stageFail}; }`);
  }
  lines.push(`  cd ${q(t.cwd)} || ${stageFail}`, 'else', `  mkdir -p ${q(work)} || ${stageFail}`);
  for (const rel of rels) {
    const to = join(work, rel);
    lines.push(`  mkdir -p ${q(dirname(to))} && cp ${q(join(snapshots, rel))} ${q(to)} || { echo ${q(`cairn: cannot stage the source ${rel} of step "${step}"`)} >&2; ${stageFail}; }`);
  }
  lines.push(`  cd ${q(work)} || ${stageFail}`, 'fi');
  for (const [k, v] of Object.entries(commandEnv(t, attempt))) lines.push(`export ${k}=${q(v)}`);
  // The step's venv, conda prefix or wrapper (the runner's rule).
  const launch = commandLaunch(t, commandArgs(t, attempt));
  lines.push(...commandShellSetup(launch, q, (fix) => `{ echo ${q(`${NOT_FOUND_MARK} ${JSON.stringify(t.program)}: ${fix}`)} "on Ray node $(hostname)" >&2; exit ${NOT_FOUND_EXIT}; }`));
  const first = launch.argv[0] as string;
  lines.push(`command -v ${q(first)} >/dev/null 2>&1 || { echo ${q(`${NOT_FOUND_MARK} ${JSON.stringify(first)}: not found`)} "on PATH ($PATH) in $(pwd) on Ray node $(hostname)" >&2; exit ${NOT_FOUND_EXIT}; }`);
  lines.push(['exec', ...launch.argv.map(q)].join(' '));
  return { command: `${lines.join('\n')}\n`, resultPath, program: t.program };
};
