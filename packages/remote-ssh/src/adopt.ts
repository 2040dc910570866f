/**
 * Adopting a job after a runner restart: found by its handle's host and job dir (or, for a job
 * recorded while still queued, looked for on every host), its pid and where it runs read from
 * the job dir when the handle lacks them, its resources reserved again; then tracked as running
 * and polled (its completion may have been pushed to the runner that is gone). Its first status
 * check touches the job's heartbeat, so the wrapper's watchdog leaves it running.
 */
import { statSync } from 'node:fs';
import type { JobHandle } from '@cairn/runner/executor';
import type { Fleet, Job, SshJobInfo } from './model.js';
import { finish } from './finish.js';
import type { Demand } from './placement.js';
import { promisify } from './sftp.js';
import { statusOf } from './status.js';

/** `Executor.adopt` (after start): the job's handle, or null when it is gone from its host. */
export async function adopt(f: Fleet, handle: JobHandle): Promise<JobHandle | null> {
  const info = { ...(handle.info as unknown as SshJobInfo) };
  if (f.jobs.has(handle.jobId)) return (f.jobs.get(handle.jobId) as Job).handle;
  let h = f.hostOf(handle);
  if (!h || !info.jobDir) {
    // Submitted while queued: it may have started on any host since.
    for (const cand of f.hosts) {
      if (cand.workDir === '') continue; // not reached (and checked) yet
      const dir = `${cand.workDir}/jobs/${info.jobDirName}`;
      const s = await statusOf(f, cand, [dir]).catch(() => null);
      if (s && s[0]?.kind !== 'missing') {
        h = cand;
        info.host = cand.options.name;
        info.jobDir = dir;
        break;
      }
    }
    if (!h || !info.jobDir) return null;
  }
  const [state] = await statusOf(f, h, [info.jobDir]);
  if (!state || state.kind === 'missing' || state.kind === 'gone') return null;
  const sftp = promisify(await h.conn.sftp());
  if (!info.pid) {
    const pid = await sftp
      .readFile(`${info.jobDir}/pid`)
      .then((b) => Number.parseInt(b.toString('utf8'), 10))
      .catch(() => 0);
    info.pid = pid || undefined;
  }
  if (!info.runsIn) {
    // Recorded before launch (or by an older version): the worker leaves a marker in the job dir.
    const workerDir = await sftp.readFile(`${info.jobDir}/worker`).then((b) => b.toString('utf8').trim(), () => undefined);
    info.runsIn = workerDir ? 'worker' : 'detached';
    if (workerDir) info.workerDir = workerDir;
  }
  const demand: Demand = { cpus: info.cpus ?? 1, memoryGb: info.memoryGb ?? 0, gpus: info.gpuIndices?.length ?? 0 };
  h.slots.reserve(demand, info.gpuIndices ?? []);
  // No worker link: polled, since its completion may have been pushed to the runner that is gone.
  const j = f.newJob(handle.jobId, info, demand, { phase: 'running', host: h, request: undefined, stepBundle: undefined, runsIn: info.runsIn });
  // The runner that is gone streamed part of the logs already (the local files are a prefix of the remote ones).
  j.logs.stdout = localSize(info.logPaths?.stdout);
  j.logs.stderr = localSize(info.logPaths?.stderr);
  f.jobs.set(j.id, j);
  if (state.kind === 'exited') void finish(f, j, h, state.code);
  setImmediate(() => {
    j.handedOut = true;
    f.flush(j);
  });
  return j.handle;
}

/** Size of a local file, 0 when absent. */
function localSize(path: string | undefined): number {
  try {
    return path ? statSync(path).size : 0;
  } catch {
    return 0;
  }
}
