/**
 * The reserved function reference of command steps. A command step lowers to an ordinary
 * `apply` spec whose function is `{ module: 'cairn:command', export: 'run' }`: identity, the
 * task payload, the codec, executors and records carry it like any other step. Nothing imports
 * that module: {@link resolveFnRef} hands back the runner that `@cairn/runner` registered (a
 * remote executor may instead recognise `ref.module === COMMAND_MODULE` and run the program
 * itself, with a POSIX shell and no Node).
 */
import { CairnError } from './errors.js';
import type { FnRef, StepContext } from './types.js';

/** The module name of the reserved command runner (never imported). */
export const COMMAND_MODULE = 'cairn:command';

/** The reserved function reference of every command step. */
export const COMMAND_REF: FnRef = Object.freeze({ module: COMMAND_MODULE, export: 'run' });

/** Runs one attempt of a command step: its resolved inputs template (see `CommandTemplate`) and the step context. */
export type CommandRunner = (template: unknown, ctx: StepContext) => Promise<unknown>;

/** Where the registered runner lives: one slot per thread, shared by every copy of this package. */
const SLOT = Symbol.for('cairn.commandRunner');

/** @internal Registers the command runner (`@cairn/runner` does, when it is loaded). */
export function registerCommandRunner(runner: CommandRunner): void {
  (globalThis as Record<symbol, unknown>)[SLOT] = runner;
}

/** The registered command runner; `CAIRN_FN_REF` when `@cairn/runner` was not loaded in this thread. */
export function commandRunner(step?: string): CommandRunner {
  const runner = (globalThis as Record<symbol, unknown>)[SLOT];
  if (typeof runner !== 'function') {
    throw new CairnError('CAIRN_FN_REF', `${step ? `Step "${step}": ` : ''}a command step runs through @cairn/runner, which is not loaded here; run it with a StepRunner (or import '@cairn/runner/worker' on the far side).`, { step });
  }
  return runner as CommandRunner;
}
