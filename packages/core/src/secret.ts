/**
 * Secrets as a value kind: `secret('HF_TOKEN')` stands for a credential a step needs. Only its
 * NAME is part of the step's identity (canonically `{"__secret__":"HF_TOKEN"}`, see
 * docs/identity.md); the value is resolved by the runner at run time from its providers and
 * handed to the step when it is called — never hashed, recorded or written to a task.
 *
 * In an inputs template (what travels to workers) a secret is the plain tagged object
 * `{ __secret__: NAME }`: it survives msgpack, structured clone and JSON alike, and
 * {@link revealSecrets} replaces it with the value at call time.
 */
import { brand, hasBrand } from './brand.js';
import { CairnError } from './errors.js';

/** On `Secret.prototype`. */
export const SECRET_BRAND = Symbol.for('cairn.Secret');

/** The key of a secret's tagged form (reserved in inputs: canonical encoding refuses it elsewhere). */
export const SECRET_TAG = '__secret__';

/**
 * The secret values handed to one call of a step (name → value): a non-enumerable property of
 * the step's context, set by the executor that calls it, so a context printed or serialised never
 * shows them.
 */
export const SECRET_VALUES = Symbol.for('cairn.secretValues');

/** A secret's name: an environment variable name (letters, digits, `_`; not starting with a digit). */
const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A reference to a secret by name; its value is never held here. */
export class Secret {
  /** The secret's name, e.g. `HF_TOKEN`. */
  readonly name: string;
  constructor(name: string) {
    this.name = name;
    Object.freeze(this);
  }

  /** What a secret prints as anywhere (logs, JSON): its name only. */
  toJSON(): { readonly __secret__: string } {
    return { [SECRET_TAG]: this.name } as { readonly __secret__: string };
  }

  /** `secret(NAME)`. */
  toString(): string {
    return `secret(${this.name})`;
  }
}

brand(Secret.prototype, SECRET_BRAND);

/**
 * A secret the step needs, by name: usable in `apply` inputs and in a command step's `env`.
 * The runner resolves its value at run time (its environment, a 0600 file, a command).
 */
export function secret(name: string): Secret {
  if (typeof name !== 'string' || !SECRET_NAME.test(name)) {
    throw new CairnError('CAIRN_INVALID_SPEC', `secret(${JSON.stringify(name)}): a secret's name is an environment variable name (letters, digits, _; not starting with a digit), such as 'HF_TOKEN'.`);
  }
  return new Secret(name);
}

/** True for a `secret()` (also one made by another copy of this package). */
export function isSecret(value: unknown): value is Secret {
  return hasBrand(value, SECRET_BRAND);
}

/** The name of a secret's tagged form `{ __secret__: NAME }` (exactly that one key), else undefined. */
export function taggedSecretName(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const name = (value as Record<string, unknown>)[SECRET_TAG];
  if (typeof name !== 'string') return undefined;
  for (const k in value) if (k !== SECRET_TAG) return undefined;
  return name;
}

/** The names of the secrets in `value` (a `Secret` or its tagged form, at any depth), each once, in first-seen order. */
export function secretNames(value: unknown): string[] {
  const names: string[] = [];
  const walk = (v: unknown, depth: number): void => {
    if (typeof v !== 'object' || v === null || depth > 64) return;
    const name = isSecret(v) ? v.name : taggedSecretName(v);
    if (name !== undefined) {
      if (!names.includes(name)) names.push(name);
      return;
    }
    if (Array.isArray(v)) for (const e of v) walk(e, depth + 1);
    else {
      const p = Object.getPrototypeOf(v) as object | null;
      if (p === Object.prototype || p === null) for (const k in v) walk((v as Record<string, unknown>)[k], depth + 1);
    }
  };
  walk(value, 0);
  return names;
}

/**
 * `value` with each secret (a `Secret` or its tagged form) replaced by its value in `values`
 * (arrays and plain objects copied; `value` itself is returned when it holds none). A secret
 * missing from `values` is `CAIRN_SECRET_UNRESOLVED` naming it and the step.
 */
export function revealSecrets(value: unknown, values: Readonly<Record<string, string>>, step: string): unknown {
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v !== 'object' || v === null || depth > 64) return v;
    const name = isSecret(v) ? v.name : taggedSecretName(v);
    if (name !== undefined) {
      if (!Object.hasOwn(values, name)) {
        throw new CairnError('CAIRN_SECRET_UNRESOLVED', `Step "${step}" needs secret ${name}, which was not handed to it; run it with a runner whose secret providers resolve ${name}.`, { step });
      }
      return values[name];
    }
    if (Array.isArray(v)) {
      let out: unknown[] | undefined;
      for (let i = 0; i < v.length; i++) {
        const r = walk(v[i], depth + 1);
        if (r !== v[i]) (out ??= v.slice())[i] = r;
      }
      return out ?? v;
    }
    const p = Object.getPrototypeOf(v) as object | null;
    if (p !== Object.prototype && p !== null) return v;
    let out: Record<string, unknown> | undefined;
    for (const k in v) {
      const e = (v as Record<string, unknown>)[k];
      const r = walk(e, depth + 1);
      if (r !== e) (out ??= { ...(v as Record<string, unknown>) })[k] = r;
    }
    return out ?? v;
  };
  return walk(value, 0);
}
