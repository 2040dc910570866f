/** What every command gets: streams, environment and the global flags. */
import pc from 'picocolors';

/** Colour functions (picocolors), disabled when colour is off. */
export type Colors = ReturnType<typeof pc.createColors>;

/** The environment a command runs in (swappable in tests). */
export interface CliContext {
  /** Standard output. */
  readonly stdout: NodeJS.WriteStream;
  /** Standard error. */
  readonly stderr: NodeJS.WriteStream;
  /** Environment variables. */
  readonly env: NodeJS.ProcessEnv;
  /** Working directory. */
  readonly cwd: string;
  /** `--verbose`: cause chains and stacks on errors. */
  verbose: boolean;
  /** `--config FILE`. */
  configFile: string | undefined;
  /** `--config` without a file (`explain`: print the config a step receives). */
  showConfig: boolean;
  /** Colours for stdout. */
  colors: Colors;
}

/**
 * Colour is on for a TTY unless `NO_COLOR` is set (any value) or `--no-color` was given;
 * `FORCE_COLOR` turns it on for pipes.
 */
export function colorEnabled(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv, flag: boolean | undefined): boolean {
  if (flag === false) return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0') return true;
  return stream.isTTY === true && env.TERM !== 'dumb';
}

/** A context for the real process. */
export function processContext(): CliContext {
  const env = process.env;
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    env,
    cwd: process.cwd(),
    verbose: false,
    configFile: undefined,
    showConfig: false,
    colors: pc.createColors(colorEnabled(process.stdout, env, undefined)),
  };
}

/** Writes one line to stdout. */
export function out(ctx: CliContext, line = ''): void {
  ctx.stdout.write(`${line}\n`);
}

/** Writes one line to stderr. */
export function err(ctx: CliContext, line = ''): void {
  ctx.stderr.write(`${line}\n`);
}
