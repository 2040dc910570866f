/**
 * How a command step's program's usage reaches the executor that runs it in-process (`inline`,
 * and `threads`, which runs command steps in the runner's main thread): the executor puts a
 * sink on the step context under this symbol, and `runCommand` samples the program's process
 * tree and hands the result to it. Where there is no sink (the `process` executor, remote
 * workers) the whole worker is measured from outside, program included, and nothing is sampled
 * twice.
 */
import type { TreeUsage } from '../usage/tree-meter.js';

/** What a program used and how it ended. */
export interface ProgramUsage extends TreeUsage {
  /** Exit code, or null when a signal ended it. */
  readonly exitCode: number | null;
  /** The signal that ended it, or null. */
  readonly signal: string | null;
}

/** Receives a command step's program usage once it has exited. */
export type ProgramUsageSink = (usage: ProgramUsage) => void;

/** The step-context key of the {@link ProgramUsageSink} (registered: the same in every package copy). */
export const PROGRAM_USAGE_SINK = Symbol.for('cairn.programUsageSink');

/** The sink a step context carries, if any. */
export function programUsageSinkOf(ctx: object): ProgramUsageSink | undefined {
  const sink = (ctx as Record<symbol, unknown>)[PROGRAM_USAGE_SINK];
  return typeof sink === 'function' ? (sink as ProgramUsageSink) : undefined;
}
