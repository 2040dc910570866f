/**
 * Each host's persistent worker as the executor uses it: the channel, opened on first use
 * (starting the worker when none answers; a worker bundle that does not match its hash is
 * uploaded again, once), and what comes back on it: `done` (collected by finish.ts from the
 * message itself, without SFTP reads), `rejected` (the job is lost and retried), and the channel
 * closing (its jobs fall back to the status check at once). The channel itself is worker-link.ts.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CairnError } from '@cairn/core';
import { codeMismatch, type CodeBundle } from './deploy.js';
import { finish } from './finish.js';
import type { Fleet, HostState, Job } from './model.js';
import type { FromWorker } from './runtime/protocol.js';
import { check } from './status.js';
import { WorkerLink } from './worker-link.js';

/** The persistent worker's entry: `dist/ssh-worker.js` next to the built package, else the TypeScript source (tests). */
function sshWorkerEntry(): string {
  const dir = dirname(fileURLToPath(import.meta.url));
  const built = join(dir, 'ssh-worker.js');
  return existsSync(built) ? built : join(dir, 'runtime', 'ssh-worker.ts');
}

/** The bundle of the persistent worker (`ssh-worker.mjs`). */
export function sshWorkerBundle(f: Fleet): Promise<CodeBundle> {
  return f.bundler.bundle(pathToFileURL(sshWorkerEntry()).href, 'ssh-worker.mjs');
}

/** The channel to the host's worker, starting the worker when none answers. */
export function linkFor(f: Fleet, h: HostState): Promise<WorkerLink> {
  if (h.link?.up) return Promise.resolve(h.link);
  h.linking ??= (async () => {
    const bundle = await sshWorkerBundle(f);
    // A worker that exits (idle) between the start script's check and the relay's connect
    // closes the channel before hello: the next attempt starts a new one. A worker bundle that
    // does not match its hash is not run: it is uploaded again, once.
    let link: WorkerLink | undefined;
    for (let attempt = 1, mismatches = 0; !link; attempt++) {
      const entry = await f.uploader.ensure(h.conn, h.workDir, bundle);
      const target = { dir: `${h.workDir}/workers/${bundle.hash}`, nodePath: h.nodePath, entry, entrySha256: bundle.sha256, idleMs: f.workerIdleMs };
      try {
        link = await WorkerLink.open(h.conn, target);
      } catch (err) {
        if ((err as { codeMismatch?: boolean }).codeMismatch) {
          f.uploader.forget(h.conn, h.workDir, bundle);
          if (++mismatches >= 2) throw codeMismatch(h.conn, h.workDir, 'the persistent worker', (err as Error).message);
          continue;
        }
        if (attempt >= 3 || !(err as { workerVanished?: boolean }).workerVanished) throw err;
      }
    }
    const opened = link;
    opened.onMessage = (msg) => onWorkerMessage(f, h, msg);
    opened.onClose = () => onWorkerClosed(f, h, opened);
    h.link = opened;
    return opened;
  })().finally(() => {
    h.linking = undefined;
  });
  return h.linking;
}

function onWorkerMessage(f: Fleet, h: HostState, msg: FromWorker): void {
  if (msg.t !== 'done' && msg.t !== 'rejected') return;
  let j: Job | undefined;
  for (const c of f.jobs.values()) if (c.host === h && c.phase === 'running' && c.info.jobDir === msg.dir) j = c;
  if (!j) return; // another executor's job, or already ended by a status check
  if (msg.t === 'rejected') {
    // A bundle that did not verify is uploaded again by the retry (the runner retries a lost job).
    if (msg.codeMismatch && j.stepBundle) f.uploader.forget(h.conn, h.workDir, j.stepBundle);
    const fix = msg.codeMismatch ? 'It is uploaded again and the step retried; nothing ran.' : `Check that workDir (${h.workDir}) is writable.`;
    const error = new CairnError('CAIRN_REMOTE', `SSH host "${h.options.name}": the persistent worker could not start step "${j.info.step}": ${msg.message}. ${fix}`, { step: j.info.step, retryable: true });
    f.end(j, { state: 'lost', infrastructure: true, reason: error.message, error });
    return;
  }
  const b64 = (v: string | undefined) => (v === undefined ? undefined : Buffer.from(v, 'base64'));
  void finish(f, j, h, msg.code, { result: b64(msg.result) ?? null, usage: msg.usage, stdout: b64(msg.stdout), stderr: b64(msg.stderr), out: msg.out });
}

/** The worker died or the connection dropped: its jobs fall back to the status check, now. */
function onWorkerClosed(f: Fleet, h: HostState, link: WorkerLink): void {
  if (h.link === link) h.link = undefined;
  const waiting = [...f.jobs.values()].filter((j) => j.link === link);
  for (const j of waiting) j.link = undefined;
  const running = waiting.filter((j) => j.phase === 'running');
  if (running.length > 0 && !h.checking) void check(f, h, running);
}
