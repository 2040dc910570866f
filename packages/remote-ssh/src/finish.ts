/**
 * Collecting a job that ended on its host: its logs (appended to the local log files), its result
 * and, unless `sharedFs`, its outputs (on success) and checkpoints (whatever the end) staged back, in parallel; then the job ends as succeeded,
 * cancelled, or failed with the step's own error or one naming the exit code and the last of
 * its stderr. A worker's `done` message carries logs, result and output listing (`Inline`).
 * A command step's result is the JSON its program wrote (see command.ts).
 */
import { existsSync } from 'node:fs';
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { CairnError } from '@cairn/core';
import { decodeResult, maskedLogWriter, parseUsage, rebuildError, usageFile, USAGE_FILE, type MaskedLogWriter } from '@cairn/runner/executor';
import { commandOutcome } from './command.js';
import type { Fleet, HostState, Inline, Job } from './model.js';
import { removeLater } from './hosts.js';
import { shScript } from './quote.js';
import { TAIL_SCRIPT } from './remote-script.js';
import { promisify } from './sftp.js';
import { downloadDir } from './staging.js';

const LOG_TAIL_BYTES = 4000;

/** Collects an ended job: logs, result, staged outputs. `inline` is what a worker's `done` carried. */
export async function finish(f: Fleet, j: Job, h: HostState, code: number, inline?: Inline): Promise<void> {
  j.phase = 'finishing';
  const jobDir = j.info.jobDir as string;
  try {
    const staging = code === 0 && !f.opts.sharedFs && j.info.remoteOutputPath !== undefined;
    const command = j.info.command !== undefined;
    const readResult = async () => promisify(await h.conn.sftp()).readFile(`${jobDir}/${command ? 'result.json' : 'result.msgpack'}`).catch(() => null);
    // What the far side measured (worker/self-usage.ts, or the command wrapper): next to the attempt's other files.
    const copyUsage = async () => {
      const attemptDir = j.request?.attemptDir;
      if (attemptDir === undefined) return;
      // A worker's `done` carries it; otherwise it is read from the job dir.
      const text = inline?.usage !== undefined ? JSON.stringify(inline.usage) : await promisify(await h.conn.sftp()).readFile(`${jobDir}/${USAGE_FILE}`).then((b) => Buffer.from(b).toString('utf8')).catch(() => null);
      const usage = text === null ? null : parseUsage(text);
      if (usage !== null) await mkdir(attemptDir, { recursive: true }).then(() => writeFile(usageFile(attemptDir), JSON.stringify(usage))).catch(() => undefined);
    };
    // What the status checks already streamed to the local files is not appended again.
    await j.logs.writing;
    const { stdout: outAt, stderr: errAt } = j.logs;
    // A staged checkpoint directory comes back whatever the end (a failed or preempted attempt's
    // checkpoints are what the retry resumes from). Losing them costs progress, not the step: warned.
    const cp = j.info.checkpoints;
    const copyCheckpoints = async () => {
      if (cp === undefined) return;
      await downloadDir(h.conn, cp.remote, cp.local).catch((err: unknown) => f.logger.warn(`[${f.name}] SSH host "${h.options.name}": the checkpoints of step "${j.info.step}" could not be copied back from ${cp.remote} (${(err as Error).message}); a retry resumes from the ones copied before.`));
    };
    // Logs, result, outputs and checkpoints in parallel: one round trip's latency, not four.
    const [, bytes, staged] = await Promise.all([
      inline?.stdout && inline.stderr ? appendLogs(j, inline.stdout.subarray(outAt), inline.stderr.subarray(errAt), true) : copyLogs(j, h, outAt, errAt),
      inline ? inline.result : readResult(),
      staging ? downloadDir(h.conn, j.info.remoteOutputPath as string, j.info.outputPath, inline?.out).then(() => true) : Promise.resolve(false),
      copyUsage(),
      copyCheckpoints(),
    ]);
    if (command) {
      const ended = j.cancelRequested && code !== 0 ? { state: 'cancelled' as const, exitCode: code } : await commandOutcome(j, h, code, bytes ? Buffer.from(bytes).toString('utf8') : null, (m) => f.logger.info(m));
      if (staged && ended.state === 'succeeded') removeLater(h, [`${jobDir}/out`, `${jobDir}/deps`, ...(cp ? [cp.remote] : [])]);
      f.end(j, ended);
      return;
    }
    const result = bytes ? decodeResult(bytes) : null;
    if (code === 0 && result?.ok) {
      if (staged) removeLater(h, [`${jobDir}/out`, `${jobDir}/deps`, ...(cp ? [cp.remote] : [])]);
      f.end(j, { state: 'succeeded', result: result.result, exitCode: 0 });
      return;
    }
    if (j.cancelRequested) {
      f.end(j, { state: 'cancelled', exitCode: code });
      return;
    }
    const tail = await stderrTail(j, h);
    const where = `on SSH host "${h.options.name}" (${jobDir})`;
    let error: Error;
    if (result && !result.ok) {
      error = rebuildError(result.error, j.info.step);
      Object.assign(error, { exitCode: code, logTail: tail, host: h.options.name });
    } else {
      error = new CairnError('CAIRN_REMOTE', `Step "${j.info.step}" exited with code ${code} ${where} without a result.${tail ? ` Last stderr:\n${tail}` : ''}`, { step: j.info.step });
      Object.assign(error, { exitCode: code, logTail: tail, host: h.options.name });
    }
    f.end(j, { state: 'failed', error, exitCode: code, reason: `exit code ${code}` });
  } catch (err) {
    if (j.phase !== 'finishing') return;
    f.end(j, { state: 'lost', infrastructure: true, reason: `collecting the result failed: ${(err as Error).message}`, error: err });
  }
}

/** The last `LOG_TAIL_BYTES` of the job's stderr: from the local copy, else from the host. */
async function stderrTail(j: Job, h: HostState): Promise<string> {
  try {
    const local = await readFile(j.info.logPaths.stderr, 'utf8');
    return local.slice(-LOG_TAIL_BYTES);
  } catch {
    const r = await h.conn.exec(shScript(TAIL_SCRIPT, [String(LOG_TAIL_BYTES), `${j.info.jobDir}/stderr.log`])).catch(() => null);
    return r?.stdout.toString('utf8') ?? '';
  }
}

/** Copies the remote logs past the given offsets (what is already local) to the job's local log files. */
async function copyLogs(j: Job, h: HostState, outAt: number, errAt: number): Promise<void> {
  const sftp = promisify(await h.conn.sftp());
  const read = (k: 'stdout' | 'stderr') => sftp.readFile(`${j.info.jobDir}/${k}.log`).catch(() => Buffer.alloc(0));
  const [stdout, stderr] = await Promise.all([read('stdout'), read('stderr')]);
  await appendLogs(j, stdout.subarray(outAt), stderr.subarray(errAt), true);
}

/** Each job's local log bytes in waiting: its streamed chunks, masked on write. */
const pending = new WeakMap<Job, { writer: MaskedLogWriter; out: { stdout: Buffer[]; stderr: Buffer[] } }>();

/**
 * Appends a job's log contents to its local log files (creating them when empty), with the
 * step's secret values masked on write (a value split across two status checks included);
 * `last` (the job ended) appends what the masker still held.
 */
export async function appendLogs(j: Job, stdout: Buffer, stderr: Buffer, last = false): Promise<void> {
  let p = pending.get(j);
  if (p === undefined) {
    const out: { stdout: Buffer[]; stderr: Buffer[] } = { stdout: [], stderr: [] };
    p = { writer: maskedLogWriter(j.request?.secrets, (k, bytes) => void out[k].push(Buffer.from(bytes))), out };
    pending.set(j, p);
  }
  p.writer.write('stdout', stdout);
  p.writer.write('stderr', stderr);
  if (last) p.writer.end();
  const masked = { stdout: Buffer.concat(p.out.stdout.splice(0)), stderr: Buffer.concat(p.out.stderr.splice(0)) };
  await Promise.all(
    (['stdout', 'stderr'] as const).map(async (k) => {
      const local = j.info.logPaths[k];
      const data = masked[k];
      await mkdir(dirname(local), { recursive: true });
      if (data.length > 0) await appendFile(local, data);
      else if (!existsSync(local)) await writeFile(local, '');
    }),
  );
}
