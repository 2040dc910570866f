/**
 * What a command step's program is handed, written once for every executor that runs programs:
 * the context file's content ({@link CommandContextFile}) and the variables set for it (the
 * step's own `env`, then `CAIRN_CONTEXT`, `CAIRN_RESULT`, `CAIRN_OUTPUT`, `CAIRN_STEP`,
 * `CAIRN_ATTEMPT`, `CAIRN_CHECKPOINT_DIR` when the store keeps one, and `CUDA_VISIBLE_DEVICES` when
 * GPU slots were assigned). Pure: the caller
 * writes the file and starts the program (a child process here, a shell script elsewhere).
 */
import type { CommandContextFile, CommandTemplate } from '@cairn/core';
import { resolveValue } from './template.js';

/** The facts of one attempt, as the host that runs the program sees them. */
export interface CommandAttempt {
  /** The step's name. */
  readonly step: string;
  /** 1-based attempt number. */
  readonly attempt: number;
  /** Where the program writes its output. */
  readonly outputPath: string;
  /** Dependencies' output paths, keyed by `nameWithHash`. */
  readonly depPaths: Readonly<Record<string, string>>;
  /** GPU slots assigned to the attempt; `undefined` when the executor assigned none (or does not know them yet). */
  readonly gpuIndices?: readonly number[] | undefined;
  /** Where the context file is written (`$CAIRN_CONTEXT`). */
  readonly contextPath: string;
  /** Where the program may write its result (`$CAIRN_RESULT`). */
  readonly resultPath: string;
  /** The step's durable checkpoint directory (`$CAIRN_CHECKPOINT_DIR`, `CHECKPOINT_DIR`); absent when its store keeps none. */
  readonly checkpointDir?: string | undefined;
}

/** The program's arguments for this attempt (context placeholders filled in). */
export function commandArgs(t: CommandTemplate, a: Pick<CommandAttempt, 'attempt' | 'checkpointDir' | 'step'>): string[] {
  return t.args.map((v) => resolveValue(v, a));
}

/** The content of the context file (`JSON.stringify` it). */
export function commandContext(t: CommandTemplate, a: CommandAttempt): CommandContextFile {
  return {
    cairn: 1,
    step: a.step,
    attempt: a.attempt,
    outputPath: a.outputPath,
    inputs: t.inputs,
    runtime: t.runtime,
    depPaths: a.depPaths,
    argv: [t.program, ...commandArgs(t, a)],
    sources: t.sources,
    ...(a.gpuIndices === undefined ? {} : { gpuIndices: a.gpuIndices }),
    resultPath: a.resultPath,
    ...(a.checkpointDir === undefined ? {} : { checkpointDir: a.checkpointDir }),
  };
}

/** The variables set for the program, in the order they are applied (the step's `env`, then Cairn's, which win). */
export function commandEnv(t: CommandTemplate, a: CommandAttempt): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(t.env)) env[k] = resolveValue(v, a);
  env.CAIRN_CONTEXT = a.contextPath;
  env.CAIRN_RESULT = a.resultPath;
  env.CAIRN_OUTPUT = a.outputPath;
  env.CAIRN_STEP = a.step;
  env.CAIRN_ATTEMPT = String(a.attempt);
  if (a.checkpointDir !== undefined) env.CAIRN_CHECKPOINT_DIR = a.checkpointDir;
  if (a.gpuIndices !== undefined) env.CUDA_VISIBLE_DEVICES = a.gpuIndices.join(',');
  return env;
}

/**
 * How the program is started in its environment (`t.environment`), written once for the local
 * runner and every shell that starts programs elsewhere: what `source bin/activate` does, as data.
 */
export interface CommandLaunch {
  /** The command line: the environment's `wrap` words, then the program and its arguments. */
  readonly argv: readonly string[];
  /** Directories put first on `PATH` (the venv's or conda prefix's `bin/`). */
  readonly pathFirst: readonly string[];
  /** Variables set (`VIRTUAL_ENV`; `CONDA_PREFIX`, `CONDA_DEFAULT_ENV`). */
  readonly set: Readonly<Record<string, string>>;
  /** Variables removed (`PYTHONHOME`, which would point the venv's Python elsewhere). */
  readonly unset: readonly string[];
  /** A directory that must exist before the program starts (the environment's `bin/`), and what to tell the user when it does not. */
  readonly require?: { readonly dir: string; readonly fix: string };
}

/** The launch of `t` with its resolved arguments `args` (see {@link commandArgs}). */
export function commandLaunch(t: CommandTemplate, args: readonly string[]): CommandLaunch {
  const e = t.environment;
  const argv = [...(e?.wrap ?? []), t.program, ...args];
  if (e?.venv !== undefined) {
    const bin = `${e.venv}/bin`;
    return { argv, pathFirst: [bin], set: { VIRTUAL_ENV: e.venv }, unset: ['PYTHONHOME'], require: { dir: bin, fix: `its venv ${e.venv} has no bin/ directory here; create it (python3 -m venv ${e.venv}) or fix environment.venv` } };
  }
  if (e?.conda !== undefined) {
    const bin = `${e.conda}/bin`;
    const name = e.conda.replace(/\/+$/, '').split('/').pop() ?? e.conda;
    return { argv, pathFirst: [bin], set: { CONDA_PREFIX: e.conda, CONDA_DEFAULT_ENV: name }, unset: ['PYTHONHOME'], require: { dir: bin, fix: `its conda prefix ${e.conda} has no bin/ directory here; create it (conda create -p ${e.conda}) or fix environment.conda` } };
  }
  return { argv, pathFirst: [], set: {}, unset: [] };
}

/**
 * The POSIX shell lines that activate a launch's environment (after the step's `env` is
 * exported), for executors that start programs from a script. `quote` single-quotes a word;
 * `fail(message)` is the script's own way to stop with a not-found error.
 */
export function commandShellSetup(l: CommandLaunch, quote: (word: string) => string, fail: (message: string) => string): string[] {
  const lines: string[] = [];
  if (l.require !== undefined) lines.push(`[ -d ${quote(l.require.dir)} ] || ${fail(l.require.fix)}`);
  for (const k of l.unset) lines.push(`unset ${k}`);
  for (const [k, v] of Object.entries(l.set)) lines.push(`export ${k}=${quote(v)}`);
  if (l.pathFirst.length > 0) lines.push(`PATH=${quote(l.pathFirst.join(':'))}"\${PATH:+:$PATH}"; export PATH`);
  return lines;
}
