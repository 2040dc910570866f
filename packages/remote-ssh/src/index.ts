/**
 * @cairn/remote-ssh — an executor plugin that runs Cairn steps on SSH hosts (GPU boxes).
 */
export { createSshExecutor } from './executor.js';
export type { SshJobInfo } from './model.js';
export type { SshExecutorOptions, SshHostOptions } from './options.js';
export { DEFAULT_WORK_DIR } from './workdir.js';
export { shQuote, shScript } from './quote.js';
export { parseKnownHosts, checkHostKey, hostLookupName } from './known-hosts.js';
export type { KnownHostEntry, HostKeyCheck } from './known-hosts.js';
export { demandOf, HostSlots } from './placement.js';
export { checkWorkerMode, chooseRunsIn, LONG_STEP_SECONDS, WORKER_HINT } from './worker-policy.js';
export type { RunsIn, RunsInChoice, WorkerMode } from './worker-policy.js';
export type { Demand, HostCapacity } from './placement.js';
