/**
 * Submitting: one step as its own job, or a batch of steps as packed job arrays. Writes every
 * file a job reads (through job-dir.ts) before the scheduler hears of it, and returns the
 * handles the runner records.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { CairnError, type CairnErrorCode, type Resources } from '@cairn/core';
import { jobFiles, packFiles } from './files.js';
import { createJobDir, prepareAttempt, writeJobFile } from './job-dir.js';
import { jobName, warnSecondsFor } from './names.js';
import type { GridExecutorOptions } from './options.js';
import { planPacks, type PackPolicy, type PlannedTask } from './pack-policy.js';
import { packWorkerPath } from './paths.js';
import { workerEntryPath, type JobHandle, type JobRequest } from './runner-api.js';
import type { GridScheduler, SubmitRequest } from './scheduler.js';
import type { GridJobRecord, PackPlace } from './tracked.js';
import { commandPackWrapperScript, commandStepScript, commandWrapperScript, graceSeconds, packWrapperScript, wrapperScript } from './wrapper.js';
import { isCommandTask, prepareCommand } from './command-job.js';

/** Calls the core made to the scheduler (for tests, benchmarks and diagnostics). */
export interface GridCounters {
  /** Submissions (one per job or job array). */
  submissions: number;
  /** Steps submitted, packed or not. */
  steps: number;
  /** Status queries (one per check, for all active jobs). */
  statusQueries: number;
  /** Accounting queries (for jobs the queue no longer lists and whose files do not settle how they ended). */
  accountingQueries: number;
  /** Cancel requests sent (one per batch). */
  cancellations: number;
}

/** What submitting needs. */
export interface SubmitContext {
  readonly scheduler: GridScheduler;
  /** The executor's registry name (recorded in handles). */
  readonly name: string;
  readonly options: GridExecutorOptions;
  readonly counters: GridCounters;
  /** Holds submissions to `maxSubmitsInFlight` at once. */
  readonly limit: <T>(fn: () => Promise<T>) => Promise<T>;
}

function limits(ctx: SubmitContext, timeLimit: number | undefined): { warnSeconds: number; watchdogSeconds: number } {
  if (timeLimit === undefined) return { warnSeconds: 0, watchdogSeconds: 0 };
  const enforced = ctx.scheduler.enforcedLimit(timeLimit);
  const warnSeconds = warnSecondsFor(enforced, ctx.options.walltimeGraceSeconds);
  return { warnSeconds, watchdogSeconds: warnSeconds > 0 ? enforced - warnSeconds : 0 };
}

async function send(ctx: SubmitContext, request: SubmitRequest, steps: readonly string[]): Promise<string> {
  try {
    return await ctx.limit(() => {
      ctx.counters.submissions++;
      return ctx.scheduler.submit(request);
    });
  } catch (err) {
    const first = steps[0] ?? '?';
    const who = steps.length === 1 ? `Step "${first}"` : `${steps.length} packed steps ("${first}"…)`;
    const code: CairnErrorCode = (err as CairnError).code === 'CAIRN_CONFIG' ? 'CAIRN_CONFIG' : 'CAIRN_REMOTE';
    throw new CairnError(code, `${who}: ${(err as Error).message}`, {
      step: first,
      cause: err,
      retryable: (err as CairnError).retryable,
    });
  }
}

function record(ctx: SubmitContext, job: JobRequest, id: string, pack?: PackPlace, command?: GridJobRecord['command']): JobHandle {
  const info: GridJobRecord & Record<string, unknown> = {
    [ctx.scheduler.idKey]: id,
    scheduler: ctx.scheduler.name,
    transport: ctx.scheduler.transport,
    dir: job.attemptDir,
    stdout: job.logPaths.stdout,
    stderr: job.logPaths.stderr,
    step: job.spec.name,
    ...(pack ? { pack } : {}),
    ...(command ? { command } : {}),
  };
  return { jobId: job.jobKey, executor: ctx.name, info };
}

/** Submits one step as its own job: the runner's worker, or for a command step the program itself (no Node on the node). */
export async function submitSingle(ctx: SubmitContext, job: JobRequest): Promise<JobHandle> {
  const files = jobFiles(job.attemptDir);
  const resources = job.resources ?? {};
  const { warnSeconds, watchdogSeconds } = limits(ctx, resources.timeLimit);
  const access = ctx.options.jobAccess;
  await prepareAttempt(job, files, access);
  const title = `Cairn step "${job.spec.name}" (${job.jobKey})`;
  let script: string;
  let command: GridJobRecord['command'];
  if (isCommandTask(job.task)) {
    const plan = await prepareCommand(job.task, files, access, job.storeAccess);
    script = commandWrapperScript({ title, step: job.spec.name, files, logs: job.logPaths, plan, outputPath: job.task.outputPath, watchdogSeconds, usageExecutor: ctx.scheduler.name });
    command = plan.preemptionExitCodes.length > 0 ? { program: plan.program, preemptionExitCodes: plan.preemptionExitCodes } : { program: plan.program };
  } else {
    script = wrapperScript({
      title,
      files,
      logs: job.logPaths,
      nodePath: ctx.options.nodePath ?? process.execPath,
      workerEntry: ctx.options.workerEntry ?? workerEntryPath(),
      watchdogSeconds,
      usageExecutor: ctx.scheduler.name,
    });
  }
  await writeJobFile(files.script, script, 'script', access);
  const name = jobName(ctx.options.jobNamePrefix ?? 'cairn', job.task.nameWithHash);
  const request = { name, scriptPath: files.script, script, workdir: ctx.options.workdir ?? process.cwd(), outputDir: files.dir, resources, warnSeconds, hideEnv: secretHolders([job]) };
  ctx.counters.steps++;
  return record(ctx, job, await send(ctx, request, [job.spec.name]), undefined, command);
}

/**
 * The runner's environment variables that hold a value of a secret these jobs need (the `env`
 * provider's source, say): `sbatch --export=ALL` and `qsub -V` would copy them into the job, where
 * the scheduler keeps (and Grid Engine's `qstat -j` shows) its environment.
 */
function secretHolders(jobs: readonly JobRequest[]): string[] | undefined {
  const values = new Set<string>();
  for (const j of jobs) if (j.secrets !== undefined) for (const v of Object.values(j.secrets)) if (v !== '') values.add(v);
  if (values.size === 0) return undefined;
  return Object.keys(process.env).filter((k) => values.has(process.env[k] as string));
}

/** A manifest field must not break the tab-separated line format. */
function field(value: string, job: JobRequest): string {
  if (/[\t\n\r]/.test(value)) {
    throw new CairnError('CAIRN_CONFIG', `Step "${job.spec.name}": the path ${JSON.stringify(value)} contains a tab or line break, which a packed job cannot carry; use another store prefix or run the step alone (resources.hints.pack: false).`, { step: job.spec.name });
  }
  return value;
}

/** Cuts a batch of steps of one shape into arrays of tasks (see pack-policy.ts). */
export function planBatch(jobs: readonly JobRequest[], policy: PackPolicy): PlannedTask[][] {
  return planPacks(jobs.map((j) => j.resources?.timeLimit), policy);
}

/**
 * Submits one planned array of a batch (`tasks` index into `jobs`, steps of one shape) as one
 * packed job: a job array, or a plain job when it has one task. Resolves with the handle of
 * each of its steps, by index into `jobs`.
 */
export async function submitArray(ctx: SubmitContext, jobs: readonly JobRequest[], tasks: readonly PlannedTask[], packRoot: string): Promise<Map<number, JobHandle>> {
  const handles = new Map<number, JobHandle>();
  const shape: Resources = jobs[0]?.resources ?? {};
  const dir = join(packRoot, `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`);
  const files = packFiles(dir);
  const access = ctx.options.jobAccess;
  await createJobDir(dir, undefined, access);
  const taskLimit = tasks.reduce<number | undefined>((max, t) => (t.timeLimit === undefined ? max : Math.max(max ?? 0, t.timeLimit)), undefined);
  const { warnSeconds, watchdogSeconds } = limits(ctx, taskLimit);
  // Command steps are packed only with command steps (executor.ts): their task is a shell loop, no Node.
  const commands = isCommandTask((jobs[tasks[0]?.steps[0] ?? 0] as JobRequest).task);
  const title = `Cairn pack of ${tasks.reduce((n, t) => n + t.steps.length, 0)} steps in ${tasks.length} task(s)`;
  const script = commands
    ? commandPackWrapperScript({ title, files, taskVar: ctx.scheduler.arrayTaskVar, watchdogSeconds, usageExecutor: ctx.scheduler.name })
    : packWrapperScript({
        title,
        files,
        taskVar: ctx.scheduler.arrayTaskVar,
        nodePath: ctx.options.nodePath ?? process.execPath,
        packWorker: ctx.options.packWorker ?? packWorkerPath(),
        watchdogSeconds,
        usageExecutor: ctx.scheduler.name,
      });
  const programs = new Map<number, string>();
  for (const [t, task] of tasks.entries()) {
    const lines: string[] = [];
    for (const i of task.steps) {
      const job = jobs[i] as JobRequest;
      const stepFiles = jobFiles(job.attemptDir);
      await prepareAttempt(job, stepFiles, access);
      const limit = job.resources?.timeLimit;
      const fields = [field(job.attemptDir, job), field(job.logPaths.stdout, job), field(job.logPaths.stderr, job), limit === undefined ? '-' : String(limit)];
      if (commands) {
        const plan = await prepareCommand(job.task, stepFiles, access, job.storeAccess);
        const stepScript = commandStepScript({ title: `Cairn step "${job.spec.name}" (${job.jobKey})`, step: job.spec.name, files: stepFiles, plan, outputPath: job.task.outputPath });
        await writeJobFile(stepFiles.script, stepScript, 'script', access);
        fields.push(String(graceSeconds(plan.killGraceMs)));
        programs.set(i, plan.program);
      }
      lines.push(fields.join('\t'));
    }
    await writeJobFile(files.manifest(t + 1), `${lines.join('\n')}\n`, 'data', access);
  }
  await writeJobFile(files.script, script, 'script', access);
  const names = tasks.flatMap((t) => t.steps.map((i) => (jobs[i] as JobRequest).spec.name));
  const request: SubmitRequest = {
    name: jobName(ctx.options.jobNamePrefix ?? 'cairn', `pack-${names.length}-${(jobs[tasks[0]?.steps[0] ?? 0] as JobRequest).task.nameWithHash}`),
    scriptPath: files.script,
    script,
    workdir: ctx.options.workdir ?? process.cwd(),
    outputDir: dir,
    resources: { ...shape, timeLimit: taskLimit },
    warnSeconds,
    array: tasks.length > 1 ? { size: tasks.length } : undefined,
    hideEnv: secretHolders(tasks.flatMap((t) => t.steps.map((i) => jobs[i] as JobRequest))),
  };
  const base = await send(ctx, request, names);
  ctx.counters.steps += names.length;
  for (const [t, task] of tasks.entries()) {
    const id = tasks.length > 1 ? ctx.scheduler.taskId(base, t + 1) : base;
    for (const [index, i] of task.steps.entries()) {
      const program = programs.get(i);
      handles.set(i, record(ctx, jobs[i] as JobRequest, id, { dir, task: t + 1, index, size: task.steps.length }, program === undefined ? undefined : { program }));
    }
  }
  return handles;
}
