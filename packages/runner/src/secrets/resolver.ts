/**
 * One run's secrets: which secrets each step needs (the names in its inputs template), their
 * values from the providers (each name looked up once per run), and every value resolved so far
 * (what the run masks in logs and errors). No value is ever put in a message.
 */
import { CairnError, secretNames, type StepSpec } from '@cairn/core';
import { lookUp } from './providers.js';
import type { SecretProvider } from './types.js';

const ENV_ONLY: readonly SecretProvider[] = Object.freeze([{ type: 'env' }]);

export class RunSecrets {
  readonly #providers: readonly SecretProvider[];
  readonly #values = new Map<string, string>();
  readonly #files = new Map<string, ReadonlyMap<string, string>>();
  /** Each spec's names, found once (the run asks before its first step and again as each attempt starts). */
  readonly #names = new WeakMap<StepSpec, string[]>();

  constructor(providers: readonly SecretProvider[] | undefined) {
    this.#providers = providers ?? ENV_ONLY;
  }

  /** The names of the secrets `spec` needs (none for a step that is not an `apply`). */
  namesOf(spec: StepSpec): string[] {
    if (spec.kind !== 'apply') return [];
    let names = this.#names.get(spec);
    if (names === undefined) this.#names.set(spec, (names = secretNames(spec.inputs)));
    return names;
  }

  /**
   * The values of the secrets `spec` needs, by name (undefined when it needs none).
   * `CAIRN_SECRET_UNRESOLVED` naming the secret and the step when no provider has one.
   */
  valuesFor(spec: StepSpec): Readonly<Record<string, string>> | undefined {
    const names = this.namesOf(spec);
    if (names.length === 0) return undefined;
    const out: Record<string, string> = {};
    for (const name of names) out[name] = this.#value(name, spec.name);
    return out;
  }

  /** Drops the values resolved so far (the run has ended; a later look-up resolves again). */
  forget(): void {
    this.#values.clear();
    this.#files.clear();
  }

  /** True once any secret was resolved in this run (a run without secrets masks nothing). */
  get any(): boolean {
    return this.#values.size > 0;
  }

  /** Every value resolved in this run (to mask). */
  values(): string[] {
    return [...this.#values.values()];
  }

  /**
   * The value of secret `name`, or undefined when no provider resolves it or one refuses (a file
   * readable by others): for readers that mask what they show and withhold it otherwise.
   */
  tryValue(name: string): string | undefined {
    try {
      return this.#value(name, '');
    } catch {
      return undefined;
    }
  }

  #value(name: string, step: string): string {
    const known = this.#values.get(name);
    if (known !== undefined) return known;
    for (const p of this.#providers) {
      const v = lookUp(p, name, step, this.#files);
      if (v !== undefined) {
        this.#values.set(name, v);
        return v;
      }
    }
    const tried = this.#providers.map((p) => (p.type === 'env' ? `the environment (${p.prefix ?? ''}${name})` : p.type === 'file' ? `file ${p.path}` : `command ${p.command[0] ?? ''}`)).join(', ');
    throw new CairnError(
      'CAIRN_SECRET_UNRESOLVED',
      `Step "${step}" needs secret ${name}, which no provider resolves (tried ${tried}). Export ${name} in the runner's environment, or add a provider that has it (secrets.providers). Nothing was run.`,
      { step },
    );
  }
}
