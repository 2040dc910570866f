/**
 * Command steps (`ref.module === COMMAND_MODULE`) on an SSH host that has neither Node nor the
 * bundle: only a POSIX shell. The runner side resolves the step's template with the paths the
 * host sees, uploads each declared source once per content hash (`<workDir>/sources/<xxh64>/`,
 * checked by SHA-256 right before it runs, as code is) and writes the task as a shell script,
 * `task.sh`, every value in it quoted: it copies the sources into `<jobDir>/work/` under their
 * relative paths, writes the context file, and `exec`s the program there. The wrapper, the
 * status check, logs, cancel and the watchdog are the ones every detached job has; at the end
 * the exit code and `result.json` become the step's result or a `CAIRN_COMMAND_*` failure.
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { constants } from 'node:os';
import { posix } from 'node:path';
import { CairnError, resolveTemplate, type CommandContextFile, type CommandTemplate, type TaskPayload } from '@cairn/core';
import { checkSources, commandLaunch, commandShellSetup, lastLines, parseReportedResult, readTemplate, resolveValue, stripSecretEnv, TAIL_BYTES } from '@cairn/runner/executor';
import type { JobStatus } from '@cairn/runner/executor';
import { bundlePath, type CodeBundle } from './deploy.js';
import { shQuote, shScript } from './quote.js';
import { TAIL_SCRIPT } from './remote-script.js';
import type { HostState, Job } from './model.js';

/** The first words of the line `task.sh` prints when the program cannot be found (exit 127). */
const NOT_FOUND_MARK = 'cairn: cannot start';

/** Exit code of `task.sh` when it cannot stage the step's files (before the program starts). */
const STAGE_FAILED_EXIT = 125;

/** What a command step's launch sends its host. */
export interface CommandLaunch {
  /** The declared sources, as bundles to upload under `<workDir>/sources/`. */
  readonly sources: readonly CodeBundle[];
  /** The task: `task.sh`. */
  readonly script: string;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The program's name as the step declared it (for messages before its template is read). */
export function programOf(task: TaskPayload): string {
  const p = (task.inputs as { program?: unknown } | null)?.program;
  return typeof p === 'string' ? p : '(program)';
}

/** What a command step's job record keeps of it: its program, and its `preemptionExitCodes` when it has any. */
export function commandInfo(task: TaskPayload): { program: string; preemptionExitCodes?: number[] } {
  const codes = (task.inputs as { preemptionExitCodes?: unknown } | null)?.preemptionExitCodes;
  const preemption = Array.isArray(codes) ? codes.filter((c): c is number => Number.isInteger(c)) : [];
  return preemption.length > 0 ? { program: programOf(task), preemptionExitCodes: preemption } : { program: programOf(task) };
}

/** A program killed by SIGTERM, as its shell reports it (128 + 15). */
const SIGTERM_EXIT = 143;

/**
 * Prepares a command step's launch: its template resolved with the host's paths (`outputPath`,
 * `depPaths`), its sources read (and checked against the hashes in its identity) and `task.sh`.
 */
export async function prepareCommand(task: TaskPayload, host: CommandHostPaths): Promise<CommandLaunch> {
  const step = task.name;
  // Secrets in its env reach the program from the secrets file the wrapper sources (launch.ts), never from task.sh.
  const t = readTemplate(step, stripSecretEnv(resolveTemplate(task.inputs, task.depKeys, host.outputPath, host.depPaths, step)));
  return { sources: await readSources(step, t), script: taskScript(task, t, host) };
}

/** What a command step's task sees on its host. */
export interface CommandHostPaths {
  /** The host's work dir (sources are staged under it). */
  readonly workDir: string;
  /** The job dir. */
  readonly jobDir: string;
  /** Where the program writes its output. */
  readonly outputPath: string;
  /** Each dependency's output, by key. */
  readonly depPaths: Readonly<Record<string, string>>;
  /** GPU slots assigned to this attempt. */
  readonly gpuIndices: readonly number[];
  /** The step's checkpoint directory as the host sees it (`$CAIRN_CHECKPOINT_DIR`, `CHECKPOINT_DIR`); absent when the store keeps none. */
  readonly checkpointDir?: string | undefined;
}

/** Checks and reads each declared source (`CAIRN_COMMAND_SOURCE` when one is missing or changed). */
async function readSources(step: string, t: CommandTemplate): Promise<CodeBundle[]> {
  await checkSources(step, t);
  return Object.entries(t.sources).map(([rel, xxh64]) => {
    const bytes = readFileSync(posix.join(t.cwd, rel));
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    return { hash: xxh64, sha256, fileName: posix.basename(rel), bytes, area: 'sources' as const };
  });
}

/** Whether a source is executable here (its staged copy keeps that). */
function executable(t: CommandTemplate, rel: string): boolean {
  try {
    return (statSync(posix.join(t.cwd, rel)).mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** The task script (`task.sh`), run by the wrapper in the job dir. Every value in it is quoted. */
function taskScript(task: TaskPayload, t: CommandTemplate, host: CommandHostPaths): string {
  const step = task.name;
  const ctx = { attempt: task.attempt, checkpointDir: host.checkpointDir, step };
  const q = shQuote;
  const fail = `exit ${STAGE_FAILED_EXIT}`;
  // The launch made `work` (and the output dir); only a relaunch in this dir finds a used one.
  const lines = [`# Cairn command step ${JSON.stringify(step)}, attempt ${task.attempt}`, `if [ -e context.json ] || [ ! -d work ]; then rm -rf work context.json && mkdir work || ${fail}; fi`];
  for (const [rel, xxh64] of Object.entries(t.sources)) {
    const from = bundlePath(host.workDir, { hash: xxh64, fileName: posix.basename(rel), area: 'sources', sha256: '', bytes: new Uint8Array() });
    const to = `work/${rel}`;
    const dir = posix.dirname(to);
    lines.push(`${dir === 'work' ? '' : `mkdir -p -- ${q(dir)} && `}cp -- ${q(from)} ${q(to)}${executable(t, rel) ? ` && chmod u+x -- ${q(to)}` : ''} || { echo ${q(`cairn: cannot stage the source ${rel} of step "${step}"`)} >&2; ${fail}; }`);
  }
  const argv = t.args.map((a) => resolveValue(a, ctx));
  const context: CommandContextFile = {
    cairn: 1,
    step,
    attempt: task.attempt,
    outputPath: host.outputPath,
    inputs: t.inputs,
    runtime: t.runtime,
    depPaths: host.depPaths,
    argv: [t.program, ...argv],
    sources: t.sources,
    gpuIndices: host.gpuIndices,
    resultPath: `${host.jobDir}/result.json`,
    ...(host.checkpointDir === undefined ? {} : { checkpointDir: host.checkpointDir }),
  };
  lines.push(`printf '%s' ${q(JSON.stringify(context))} > context.json || ${fail}`);
  if (host.outputPath.startsWith('/')) lines.push(`[ -d ${q(host.outputPath)} ] || mkdir -p -- ${q(host.outputPath)} || ${fail}`);
  if (host.checkpointDir !== undefined) lines.push(`[ -d ${q(host.checkpointDir)} ] || mkdir -p -- ${q(host.checkpointDir)} || ${fail}`);
  lines.push(`cd work || ${fail}`);
  for (const [k, v] of Object.entries(t.env)) {
    if (!ENV_NAME.test(k)) throw new CairnError('CAIRN_INVALID_SPEC', `Step "${step}": environment variable name ${JSON.stringify(k)} cannot be set by a POSIX shell on an SSH host; use letters, digits and _ (not first a digit).`, { step });
    lines.push(`export ${k}=${q(resolveValue(v, ctx))}`);
  }
  const env = { CAIRN_CONTEXT: `${host.jobDir}/context.json`, CAIRN_RESULT: context.resultPath, CAIRN_OUTPUT: host.outputPath, CAIRN_STEP: step, CAIRN_ATTEMPT: String(task.attempt), ...(host.checkpointDir === undefined ? {} : { CAIRN_CHECKPOINT_DIR: host.checkpointDir }) };
  for (const [k, v] of Object.entries(env)) lines.push(`export ${k}=${q(v)}`);
  // The step's venv, conda prefix or wrapper (the runner's rule, context-file.ts).
  const launch = commandLaunch(t, argv);
  lines.push(...commandShellSetup(launch, q, (fix) => `{ echo ${q(`${NOT_FOUND_MARK} ${JSON.stringify(t.program)}: ${fix}`)} >&2; exit 127; }`));
  const first = launch.argv[0] as string;
  lines.push(`command -v -- ${q(first)} >/dev/null 2>&1 || { echo ${q(`${NOT_FOUND_MARK} ${JSON.stringify(first)}: not found`)} "on PATH ($PATH) in $(pwd)" >&2; exit 127; }`);
  // exec: the program is the wrapper's child, so the group's TERM reaches it (and all it started).
  lines.push(['exec', ...launch.argv.map(q)].join(' '));
  return `${lines.join('\n')}\n`;
}

/**
 * How a command job that ended with `code` ends: `succeeded` with the result it reported (code 0);
 * otherwise `failed` with `CAIRN_COMMAND_FAILED` (the code or signal and the last lines of its
 * stderr, read from the host) or `CAIRN_COMMAND_NOT_FOUND`.
 */
export async function commandOutcome(j: Job, h: HostState, code: number, resultText: string | null, log: (line: string) => void): Promise<JobStatus> {
  const step = j.info.step;
  const program = j.info.command?.program ?? '(program)';
  if (code === 0) {
    try {
      const reported = resultText === null ? undefined : parseReportedResult(step, program, resultText);
      if (reported?.metadata !== undefined) log(`Step "${step}" metadata ${JSON.stringify(reported.metadata)}`);
      return { state: 'succeeded', result: reported?.result, exitCode: 0 };
    } catch (error) {
      return { state: 'failed', error, exitCode: 0, reason: (error as Error).message };
    }
  }
  const tail = await stderrTail(j, h);
  const where = `on SSH host "${h.options.name}" (${j.info.jobDir})`;
  // A SIGTERM this executor did not send (a cancel ends before this: finish.ts) is the host's
  // shutdown, as a spot VM's reclaim does it, or a scheduler's; an exit code the step declared
  // for it means the same. Both are preemptions: retried from preemptionRetries.
  if (code === SIGTERM_EXIT || j.info.command?.preemptionExitCodes?.includes(code) === true) {
    const how = code === SIGTERM_EXIT ? 'received a SIGTERM Cairn did not send' : describeExit(code);
    const error = new CairnError('CAIRN_PREEMPTED', `Step "${step}": ${program} ${how} ${where}: preempted; it is retried from preemptionRetries, resuming from its checkpoints.${tail ? `\nstderr (last lines):\n${tail}` : ''}`, { step, retryable: true });
    Object.assign(error, { exitCode: code, logTail: tail, host: h.options.name });
    return { state: 'failed', error, exitCode: code, reason: 'preempted', preempted: true };
  }
  let error: CairnError;
  if (code === 127 && tail.includes(NOT_FOUND_MARK)) {
    error = new CairnError('CAIRN_COMMAND_NOT_FOUND', `Step "${step}": ${tail.slice(tail.indexOf(NOT_FOUND_MARK) + NOT_FOUND_MARK.length + 1).trim()} ${where}; install it on the host, fix the name, or give its path.`, { step });
  } else {
    const how = code === STAGE_FAILED_EXIT && tail.includes('cairn: cannot stage') ? 'could not be started (its files could not be staged)' : describeExit(code);
    error = new CairnError('CAIRN_COMMAND_FAILED', `Step "${step}": ${program} ${how} ${where}.${tail ? `\nstderr (last lines):\n${tail}` : ' It wrote nothing to stderr.'}`, { step });
  }
  Object.assign(error, { exitCode: code, logTail: tail, host: h.options.name });
  return { state: 'failed', error, exitCode: code, reason: `exit code ${code}` };
}

/** `exited with code N`, or `was killed by SIGX` for the shell's 128+N. */
function describeExit(code: number): string {
  const name = code > 128 ? Object.entries(constants.signals).find(([, n]) => n === code - 128)?.[0] : undefined;
  return name === undefined ? `exited with code ${code}` : `was killed by ${name} (exit status ${code})`;
}

/** The last lines of the job's stderr on its host. */
async function stderrTail(j: Job, h: HostState): Promise<string> {
  const r = await h.conn.exec(shScript(TAIL_SCRIPT, [String(TAIL_BYTES), `${j.info.jobDir}/stderr.log`])).catch(() => null);
  const text = r?.stdout.toString('utf8') ?? '';
  return lastLines(text, r !== null && r.stdout.length >= TAIL_BYTES);
}
