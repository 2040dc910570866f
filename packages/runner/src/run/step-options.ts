/**
 * The runner-side options a step carries outside its identity: `keepCheckpoints`,
 * `preemptionRetries` (and, read by the command runner, `preemptionExitCodes`). Command steps
 * carry them in their unhashed template part (`spec.runtime`, core's command.ts); function steps
 * have no field for them yet (the runner's options apply).
 */
import { COMMAND_MODULE, type StepSpec } from '@cairn/core';

/** A command step's unhashed options, or undefined for other steps. */
function commandOptions(spec: StepSpec): Readonly<Record<string, unknown>> | undefined {
  return spec.ref?.module === COMMAND_MODULE ? spec.runtime : undefined;
}

/** Whether the step keeps its checkpoint directory after it succeeds. */
export function keepsCheckpoints(spec: StepSpec): boolean {
  return commandOptions(spec)?.keepCheckpoints === true;
}

/** The step's own `preemptionRetries`, else `fallback` (the runner's). */
export function preemptionRetriesOf(spec: StepSpec, fallback: number): number {
  const v = commandOptions(spec)?.preemptionRetries;
  return typeof v === 'number' ? v : fallback;
}
