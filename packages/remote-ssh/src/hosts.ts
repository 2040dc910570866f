/**
 * The hosts as the executor sees them: each one's connection and slots (`openHost`), its work
 * dir checked once on first contact (`ready`), whether it takes steps now (`usable`), what
 * happens when it stays away for `hostTimeoutMs` (`loseHost`: its jobs are lost, and retried
 * elsewhere) and when it answers again (the jobs lost meanwhile are killed, so that they cannot
 * race their retries). Also the remote dirs it is to remove (`removeLater`).
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CairnError } from '@cairn/core';
import { HostConnection } from './connection.js';
import { closeShell } from './host-shell.js';
import type { Fleet, FleetOptions, HostState } from './model.js';
import type { SshHostOptions } from './options.js';
import { HostSlots } from './placement.js';
import { shScript } from './quote.js';
import { SIGNAL_SCRIPT, WORKER_CANCEL_SCRIPT } from './remote-script.js';
import { prepareWorkDir } from './workdir.js';

/** A host's state before first contact: its connection (not opened yet) and its free slots. */
export function openHost(h: SshHostOptions, opts: FleetOptions): HostState {
  const conn = new HostConnection(
    { name: h.name, host: h.host, port: h.port ?? 22, user: h.user, privateKey: h.privateKey, privateKeyPath: h.privateKeyPath, agent: h.agent, knownHostsPath: h.knownHostsPath ?? join(homedir(), '.ssh', 'known_hosts') },
    { hostKeyVerification: opts.hostKeyVerification, timeoutMs: Math.min(opts.hostTimeoutMs, 20_000), maxChannels: opts.maxChannels },
  );
  const state: HostState = {
    options: h,
    conn,
    slots: new HostSlots({ cpus: h.capacity?.cpus ?? 1, memoryGb: h.capacity?.memoryGb ?? Number.POSITIVE_INFINITY, gpus: [...(h.capacity?.gpus ?? [])] }),
    workDir: '',
    preparing: undefined,
    nodePath: h.nodePath ?? 'node',
    downSince: undefined,
    checking: false,
    workerCheckedAt: 0,
    orphans: [],
    cleanup: [],
    link: undefined,
    linking: undefined,
    shell: undefined,
    shellOpening: undefined,
    shellRetryAt: 0,
  };
  conn.onConnect = () => killOrphans(state);
  return state;
}

/**
 * Connects to `h` and, once per executor, checks its work dir (created 0700 when missing). An
 * unsafe work dir makes the host unusable for good (`conn.fatal`, `CAIRN_UNSAFE_DIR`), like a
 * refused host key: nothing is uploaded or run there.
 */
export function ready(h: HostState, hostTimeoutMs: number): Promise<void> {
  h.preparing ??= h.conn
    .ready()
    .then(() => prepareWorkDir(h.conn, h.options.workDir, Math.min(hostTimeoutMs, 20_000)))
    .then(
      (dir) => {
        h.workDir = dir;
      },
      (err: unknown) => {
        h.preparing = undefined;
        if (err instanceof CairnError && err.code === 'CAIRN_UNSAFE_DIR') h.conn.fatal = err;
        throw err;
      },
    );
  return h.preparing;
}

/** Connected, answering, and its work dir checked: steps may be placed there. */
export function usable(h: HostState): boolean {
  return !h.conn.fatal && h.downSince === undefined && h.workDir !== '';
}

/** `h` did not answer for `hostTimeoutMs`: its jobs end as lost (retried elsewhere) and are killed once it is back. */
export function loseHost(f: Fleet, h: HostState, err: Error): void {
  // New steps must not go down an old worker channel to a host declared unreachable.
  const link = h.link;
  h.link = undefined;
  link?.close();
  closeShell(h);
  for (const j of f.jobs.values()) {
    if (j.host !== h || (j.phase !== 'running' && j.phase !== 'finishing')) continue;
    if (j.info.pid) h.orphans.push({ pid: j.info.pid, jobDir: j.info.jobDir, runsIn: j.runsIn });
    // A host that disappears (a reclaimed spot VM, a dropped network) is a preemption: retried from preemptionRetries.
    f.end(j, { state: 'lost', infrastructure: true, preempted: true, reason: `host unreachable: ${h.options.name}`, error: err });
  }
  f.logger.warn(`[${f.name}] SSH host "${h.options.name}" unreachable for ${f.opts.hostTimeoutMs} ms: its jobs are lost and will be retried as preempted; new steps go to other hosts.`);
}

/** Kills the process groups of jobs declared lost while the host was away, so they cannot race their retries. */
function killOrphans(h: HostState): void {
  const orphans = h.orphans.splice(0);
  if (orphans.length === 0) return;
  const retry = () => void h.orphans.push(...orphans);
  // A detached job is its own process group; a worker step is stopped by its worker (grace 0).
  const pgids = orphans.filter((o) => o.runsIn === 'detached').map((o) => String(o.pid));
  const dirs = orphans.filter((o) => o.runsIn === 'worker' && o.jobDir).map((o) => o.jobDir as string);
  if (pgids.length > 0) h.conn.exec(shScript(SIGNAL_SCRIPT, ['KILL', ...pgids])).catch(retry);
  if (dirs.length > 0) h.conn.exec(shScript(WORKER_CANCEL_SCRIPT, ['0', ...dirs])).catch(retry);
}

/** Removes remote dirs: by the worker when its channel is up (no exec), else with the next status check. */
export function removeLater(h: HostState, dirs: string[]): void {
  if (h.link?.send({ t: 'cleanup', dirs })) return;
  h.cleanup.push(...dirs);
}
