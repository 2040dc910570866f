/**
 * A command step's resolved inputs template, checked (a decoded task is bytes from elsewhere),
 * its context placeholders filled in, and its declared sources checked against the hashes the
 * step's identity was made from.
 */
import { CairnError, describeValue, hashFile, type CommandTemplate, type CommandValue, type StepContext } from '@cairn/core';
import { join } from 'node:path';

const bad = (step: string, what: string): never => {
  throw new CairnError('CAIRN_INVALID_SPEC', `Step "${step}": its command template ${what}; lower the step again with this version of Cairn.`, { step });
};

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function checkValue(step: string, where: string, v: unknown): void {
  if (typeof v === 'string') return;
  if (isRecord(v) && (v.$context === 'attempt' || v.$context === 'checkpointDir')) return;
  bad(step, `has ${describeValue(v)} at ${where} (expected a string or a context placeholder)`);
}

/** `template` as a {@link CommandTemplate}, or `CAIRN_INVALID_SPEC`. */
export function readTemplate(step: string, template: unknown): CommandTemplate {
  if (!isRecord(template) || template.$command !== 1) return bad(step, `is ${describeValue(template)}, not a format-1 command template`);
  const t = template;
  if (typeof t.program !== 'string' || t.program.length === 0) bad(step, 'has no program');
  if (!Array.isArray(t.args)) bad(step, 'has no args array');
  (t.args as unknown[]).forEach((a, i) => checkValue(step, `args[${i}]`, a));
  if (!isRecord(t.env)) bad(step, 'has no env object');
  for (const [k, v] of Object.entries(t.env as Record<string, unknown>)) checkValue(step, `env.${k}`, v);
  if (!isRecord(t.sources)) bad(step, 'has no sources object');
  if (!isRecord(t.inputs)) bad(step, 'has no inputs object');
  if (typeof t.cwd !== 'string') bad(step, 'has no cwd');
  if (!isRecord(t.runtime)) bad(step, 'has no runtime object');
  if (t.killGraceMs !== undefined && typeof t.killGraceMs !== 'number') bad(step, 'has a killGraceMs that is not a number');
  if (t.environment !== undefined) {
    const e = t.environment;
    if (!isRecord(e)) bad(step, 'has an environment that is not an object');
    const { venv, conda, wrap } = e as Record<string, unknown>;
    if ((venv !== undefined && typeof venv !== 'string') || (conda !== undefined && typeof conda !== 'string')) bad(step, 'has an environment path that is not a string');
    if (wrap !== undefined && !(Array.isArray(wrap) && wrap.every((w) => typeof w === 'string'))) bad(step, 'has an environment.wrap that is not a list of strings');
  }
  if (t.preemptionExitCodes !== undefined && !(Array.isArray(t.preemptionExitCodes) && t.preemptionExitCodes.every((c) => typeof c === 'number'))) bad(step, 'has preemptionExitCodes that are not a list of numbers');
  return t as unknown as CommandTemplate;
}

/** What a context placeholder may stand for: the attempt number, the step's checkpoint directory (and the step's name, for the error when it has none). */
export interface ContextValues {
  /** 1-based attempt number (`ATTEMPT`). */
  readonly attempt: number;
  /** The step's checkpoint directory (`CHECKPOINT_DIR`); absent when its store keeps none. */
  readonly checkpointDir?: string | undefined;
  /** The step's name (a {@link CommandAttempt}'s). */
  readonly step?: string;
  /** The step's name (a `StepContext`'s). */
  readonly name?: string;
}

/** The string an argument or environment value stands for in this attempt. */
export function resolveValue(v: CommandValue, ctx: ContextValues): string {
  if (typeof v === 'string') return v;
  if (v.$context === 'attempt') return String(ctx.attempt);
  if (ctx.checkpointDir === undefined) {
    const step = ctx.step ?? ctx.name ?? '?';
    throw new CairnError('CAIRN_CHECKPOINT', `Step "${step}": its command uses CHECKPOINT_DIR, but its store keeps no checkpoint directory; run it on a filesystem store, or read $CAIRN_CHECKPOINT_DIR and handle its absence.`, { step });
  }
  return ctx.checkpointDir;
}

/**
 * Re-hashes each declared source: one edited since the step was declared would make an output
 * recorded under an identity it was not built from, so it is refused (lower again, run again).
 */
export async function checkSources(step: string, t: CommandTemplate): Promise<void> {
  checkSourcesNow(step, t);
}

/** {@link checkSources}, synchronously (the hashing is: no promise to wait for in a local runner). */
export function checkSourcesNow(step: string, t: CommandTemplate): void {
  for (const [rel, want] of Object.entries(t.sources)) {
    const path = join(t.cwd, rel);
    let got: string;
    try {
      got = hashFile(path);
    } catch (cause) {
      throw new CairnError('CAIRN_COMMAND_SOURCE', `Step "${step}": declared source ${rel} cannot be read at ${path} (${(cause as Error).message}); restore it, or run where the project is.`, { step, cause });
    }
    if (got !== want) {
      throw new CairnError('CAIRN_COMMAND_SOURCE', `Step "${step}": ${rel} changed after the pipeline was declared (content hash ${got}, declared with ${want}); run the pipeline again so its identity covers the new content.`, { step });
    }
  }
}
