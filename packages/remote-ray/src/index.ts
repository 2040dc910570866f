/**
 * @cairn/remote-ray — an executor plugin that runs Cairn steps as Ray jobs through the dashboard's
 * Jobs REST API (TypeScript over `fetch`; the runner embeds no Python).
 */
export { createRayExecutor, rayExecutorFactory, SUBMISSION_ID_ENV } from './executor.js';
export type { RayExecutor, RayStats } from './executor.js';
export type { RayExecutorOptions, RayRuntimeEnv, RaySecrets, RayStepHints } from './options.js';
export type { RayStoreCredentials } from './object-store.js';
export { RAY_STATES, RAY_FAILURES, classify } from './states.js';
export type { RayVerdict } from './states.js';
export type { RayJobInfo, RayJobStatus } from './client.js';
export { ENTRYPOINTS, STAGED_ENTRYPOINTS } from './entrypoint.js';
export type { EntrypointBuilder, EntrypointContext, JobEntrypoint } from './entrypoint.js';
export { submissionId } from './submission-id.js';
