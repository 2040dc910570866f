// Step functions for the grid-executor tests (Slurm, Grid Engine, the pack worker), re-imported by
// the worker inside each job. `jobId()` is the scheduler's id of the job running the step.
import { writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** The scheduler's job id in this process (Slurm, then Grid Engine), or null outside a job. */
export function jobId() {
  return process.env.SLURM_JOB_ID ?? process.env.JOB_ID ?? null;
}

/** Writes a file and returns a value. */
export async function ok(outputPath, ctx) {
  await writeFile(join(outputPath, 'done.txt'), `hello from ${jobId()}\n`);
  ctx.log.info('ok step ran');
  return { answer: 42, jobId: jobId(), host: hostname() };
}

/** Logs to stderr, then exits 3 without a result. */
export async function exit3() {
  process.stderr.write('about to fail: disk on fire\n');
  process.exit(3);
}

/** Throws an error with a code. */
export async function throws() {
  const err = new Error('the step threw on purpose');
  err.code = 'E_FIXTURE';
  throw err;
}

/** Sleeps for a long time (until cancelled or killed). */
export async function sleepy(outputPath, ctx) {
  await writeFile(join(outputPath, 'started.txt'), `${jobId()}\n`);
  await sleep(600_000, undefined, { signal: ctx.signal });
  return 'woke up';
}

/** Ignores its abort signal and sleeps on (a step that will not stop). */
export async function stubborn(outputPath) {
  await writeFile(join(outputPath, 'started.txt'), `${jobId()}\n`);
  await sleep(600_000);
  return 'never';
}

/** Sleeps a few seconds, then returns (for adoption across executor instances). */
export async function nap() {
  await sleep(4000);
  return `napped in ${jobId()}`;
}

/** Returns at once. */
export async function tiny(outputPath) {
  return outputPath.length;
}

/** Prints with console.log and ctx.log, returns the step's name. */
export async function chatty(outputPath, ctx) {
  console.log(`console line of ${ctx.name}`);
  console.error(`console error of ${ctx.name}`);
  ctx.log.warn(`ctx line of ${ctx.name}`);
  return ctx.name;
}

/** Reads `data.txt` of every dependency, writes its own, returns the text. */
export async function concat(outputPath, ctx) {
  const { readFile } = await import('node:fs/promises');
  const parts = [];
  for (const key of Object.keys(ctx.depPaths).sort()) parts.push((await readFile(join(ctx.depPaths[key], 'data.txt'), 'utf8')).trim());
  const text = `${parts.join('+')}>${ctx.name}@${jobId()}`;
  await writeFile(join(outputPath, 'data.txt'), `${text}\n`);
  return text;
}

/**
 * Prints `tick <i> <epoch ms> <job id>` every 200 ms, 40 times (8 s), then returns the count (the
 * live-logs tests). The job id is the array's in a packed task, as `squeue -o %A` and `qstat` list it.
 */
export async function ticker(outputPath, ctx) {
  const n = 40;
  const job = process.env.SLURM_ARRAY_JOB_ID ?? jobId();
  for (let i = 1; i <= n; i++) {
    console.log(`tick ${i} ${Date.now()} ${job}`);
    await sleep(200, undefined, { signal: ctx.signal });
  }
  return n;
}

/** Runs tools/testenv/usage-hog.mjs as a child: ~200 MB resident, ~1 s of CPU (the usage tests). */
export async function hog() {
  const { execFile } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  const program = fileURLToPath(new URL('./usage-hog.mjs', import.meta.url));
  await new Promise((resolve, reject) => execFile(process.execPath, [program, '-', '200', '1000', 'cairn-usage-hog'], (err) => (err ? reject(err) : resolve())));
  return 'hogged';
}
