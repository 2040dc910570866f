/**
 * For adoption tests: start a runner in a child process and wait until it has recorded the job
 * in flight of a step (its job file beside the step's output path), so the test can kill it and start another runner.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { localLayout, type JobRecord } from '@cairn/runner';

/** A runner child that has submitted a step's job. */
export interface RunnerWithJob {
  /** The runner process. */
  readonly child: ChildProcess;
  /** Resolves when the child exits. */
  readonly exited: Promise<unknown>;
  /** The job it recorded for the step. */
  readonly job: JobRecord;
}

/**
 * Runs `node script ...args` and waits (up to 30 s) for the job file under `stepPath`.
 * Throws with the child's stderr if none appears.
 */
export async function startRunnerUntilJob(script: string, args: readonly string[], stepPath: string, env: NodeJS.ProcessEnv = process.env): Promise<RunnerWithJob> {
  const child = spawn(process.execPath, [script, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const file = localLayout.jobFile(stepPath);
  for (let i = 0; i < 600; i++) {
    if (existsSync(file)) return { child, exited, job: JSON.parse(readFileSync(file, 'utf8')) as JobRecord };
    await sleep(50);
  }
  child.kill('SIGKILL');
  throw new Error(`the first runner never recorded its job: ${stderr}`);
}
