/**
 * What this plugin uses from @cairn/runner, in one place (the grid core, @cairn/grid, has the
 * rest of the executor kit behind its own runner-api.ts).
 */
export type { Executor, ExecutorCapabilities, ExecutorHost, JobHandle, JobRequest, JobState, JobStatus } from '@cairn/runner/executor';
