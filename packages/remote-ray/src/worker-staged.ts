/**
 * A `path` / `apply` step as a Ray job on a cluster that does not share the runner's filesystem
 * (`sharedFs: false`), with an S3 store: the same frame as a command step (staged-job.ts), with
 * Cairn's worker in place of the program. The step's module and the worker entry are bundled with
 * esbuild into self-contained ES modules (`step.mjs`, `worker-entry.mjs`, the runner kit's Bundler,
 * as the SSH executor deploys code) and go in the job's package, so a node needs Node.js and
 * nothing of Cairn or the project. The task (msgpack, as the shared-filesystem path writes it) is
 * the attempt's part: it travels base64 in the entrypoint, written to `<work>/task.msgpack` on the
 * node, its module the copy of `step.mjs` in `<work>/code/`, its dependencies the directories read
 * from the bucket, its output `<work>/out`. Whatever the worker exits with, its result file (the
 * value, or the error it threw) comes back as the marked line of the job's log.
 */
import { posix } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CairnError, encodeTask, type TaskPayload } from '@cairn/core';
import { NOT_FOUND_EXIT } from './command-entrypoint.js';
import type { EntrypointBuilder } from './entrypoint.js';
import { shQuote } from './quote.js';
import { workerEntryPath } from './runner-api.js';
import { stagedEntrypoint, stagedFrame } from './staged-job.js';

/** Writes base64 `$2` to the file `$1` (Python: every Ray node has it). */
const UNPACK_PY = 'import base64,sys;open(sys.argv[1],"wb").write(base64.b64decode(sys.argv[2]))';

/** The entrypoint of a worker step on a cluster without the runner's filesystem (see the module comment). */
export const stagedWorkerStep: EntrypointBuilder = async (job, ctx) => {
  const step = job.spec.name;
  const f = await stagedFrame(job, ctx, 'result.msgpack');
  if (!ctx.bundler) throw new CairnError('CAIRN_EXECUTOR', `Step "${step}": no bundler to deliver the step's code to the Ray nodes.`, { step });
  const [code, entry] = await Promise.all([ctx.bundler.bundle(job.task.ref.module, 'step.mjs'), ctx.bundler.bundle(pathToFileURL(workerEntryPath()).href, 'worker-entry.mjs')]);
  const stepFile = posix.join(f.work, 'code', 'step.mjs');
  const taskFile = posix.join(f.work, 'task.msgpack');
  const t = job.task;
  // Neither the store's step access (a module and credentials the node lacks) nor a checkpoint
  // directory on the runner's disk: the step reads its dependencies' and writes its output's directories.
  const task: TaskPayload = {
    v: t.v,
    name: t.name,
    nameWithHash: t.nameWithHash,
    kind: t.kind,
    ref: { module: pathToFileURL(stepFile).href, export: t.ref.export },
    inputs: t.inputs,
    depKeys: t.depKeys,
    outputPath: f.out,
    depPaths: f.depPaths,
    depResults: t.depResults,
    attempt: t.attempt,
    resources: t.resources,
    ...(t.recordsResult ? { recordsResult: true as const } : {}),
  };
  const q = shQuote;
  const node = ctx.nodePath;
  const setup = [
    `command -v ${q(node)} >/dev/null 2>&1 || { echo "cairn: no Node.js (${node}) on Ray node $(hostname): install Node >= 20 on every Ray node, or set the Ray executor's nodePath" >&2; exit ${NOT_FOUND_EXIT}; }`,
    `"$py" -c ${q(UNPACK_PY)} ${q(taskFile)} ${q(Buffer.from(encodeTask(task)).toString('base64'))} || ${f.stageFail}`,
    `mkdir -p ${q(posix.dirname(stepFile))} && cp "$pkg/${code.fileName}" ${q(stepFile)} || ${f.stageFail}`,
  ];
  const run = [`cd ${q(posix.join(f.work, 'work'))} || ${f.stageFail}`, `${q(node)} "$pkg/${entry.fileName}" --task ${q(taskFile)} --result ${q(f.result)}`, 'code=$?'];
  const files = [code, entry].map((b) => ({ name: b.fileName, data: Buffer.from(b.bytes), mode: 0o644 }));
  return stagedEntrypoint(job, ctx, f, { files, setup, run, resultName: 'result.msgpack', reportAlways: true });
};
