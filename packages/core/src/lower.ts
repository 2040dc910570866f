import { canonicalize } from './canonical.js';
import { CairnError } from './errors.js';
import { getFnRef } from './fnref.js';
import { type ArtifactStep, isArtifactStep, isOut, OUT } from './handle.js';
import { applyHashes, computeIdentities, nextWalkEpoch } from './identity.js';
import { growU32, TableWriter } from './pack.js';
import { captureProvenance } from './provenance.js';
import { setLazyHooks, StepSpec } from './spec.js';
import { getBackend } from './backend.js';
import type { Provenance } from './types.js';
import { isMutableVersion } from './validate.js';

let lowerEpoch = 0;

/** A dependency's place in an `apply` step's inputs template: `deps[index]`. */
export class DepSlot {
  /** Index into the step's `deps`. */
  readonly index: number;
  constructor(index: number) {
    this.index = index;
    Object.freeze(this);
  }

  /** A shared slot for `index` (slots are immutable, so lowering reuses them). */
  static of(index: number): DepSlot {
    let slot = slotCache[index];
    if (slot === undefined) {
      slot = new DepSlot(index);
      if (index < 1024) slotCache[index] = slot;
    }
    return slot;
  }
}

const slotCache: DepSlot[] = [];

function isPlain(v: object): boolean {
  const p = Object.getPrototypeOf(v) as object | null;
  return p === Object.prototype || p === null;
}

function toTemplate(value: unknown, deps: readonly ArtifactStep<unknown>[]): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (isArtifactStep(value)) return DepSlot.of(deps.indexOf(value));
  if (isOut(value)) return OUT;
  if (Array.isArray(value)) return value.map((v) => toTemplate(v, deps));
  if (isPlain(value)) {
    const out: Record<string, unknown> = {};
    for (const k in value) out[k] = toTemplate((value as Record<string, unknown>)[k], deps);
    return out;
  }
  return value;
}

/**
 * Resolves an inputs template: dependency slot `i` becomes `depPaths[depKeys[i]]`, `OUT`
 * becomes `outputPath`. Arrays and plain objects are copied; other values kept as-is.
 */
export function resolveTemplate(
  template: unknown,
  depKeys: readonly string[],
  outputPath: string,
  depPaths: Readonly<Record<string, string>>,
  step: string,
): unknown {
  const walk = (v: unknown): unknown => {
    if (typeof v !== 'object' || v === null) return v;
    if (v instanceof DepSlot) {
      const key = depKeys[v.index];
      const path = key === undefined ? undefined : depPaths[key];
      if (path === undefined) {
        throw new CairnError('CAIRN_INVALID_SPEC', `Step "${step}": no output path for dependency #${v.index}; the runner must pass every dependency's path.`, { step });
      }
      return path;
    }
    if (isOut(v)) return outputPath;
    if (Array.isArray(v)) return v.map(walk);
    if (isPlain(v)) {
      const out: Record<string, unknown> = {};
      for (const [k, e] of Object.entries(v)) out[k] = walk(e);
      return out;
    }
    return v;
  };
  return walk(template);
}

/** Resolves an `apply` step's inputs for a run (see {@link resolveTemplate}). */
export function resolveInputs(spec: StepSpec, outputPath: string, depPaths: Readonly<Record<string, string>>): unknown {
  return resolveTemplate(spec.inputs, spec.deps.map((d) => d.nameWithHash), outputPath, depPaths, spec.name);
}


/** The fingerprinted form of an `apply` step's inputs (dependencies by `name@version`, `OUT` by a placeholder). */
export function fingerprintPayload(handle: ArtifactStep<unknown>): string {
  return fastPayload(handle.inputs, 0) ?? canonicalize(handle.inputs, {
    path: 'inputs',
    step: handle.name,
    replace: (v) => (isArtifactStep(v) ? `<dep:${v.ident}>` : isOut(v) ? '<OUT>' : undefined),
  });
}

const RESERVED = new Set(['__bigint__', '__date__', '__map__', '__set__', '__bytes__']);
const HIGH_KEY = /[\uD800-\uFFFF]/;

/**
 * {@link fingerprintPayload} for the common case (plain objects and arrays of strings,
 * finite numbers, booleans, null, handles and `OUT`), byte-identical to `canonicalize`.
 * Returns `undefined` on anything else (and beyond a small depth, which also covers
 * cycles), so the general encoder decides, and reports errors with their paths.
 */
function fastPayload(v: unknown, depth: number): string | undefined {
  switch (typeof v) {
    case 'string':
      return v.isWellFormed() ? JSON.stringify(v) : undefined;
    case 'number':
      return Number.isFinite(v) ? JSON.stringify(v) : undefined;
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object':
      break;
    default:
      return undefined;
  }
  if (v === null) return 'null';
  if (isArtifactStep(v)) return plainText(v.name) && plainText(v.version) ? `"<dep:${v.name}@${v.version}>"` : JSON.stringify(`<dep:${v.name}@${v.version}>`);
  if (isOut(v)) return '"<OUT>"';
  if (depth > 16) return undefined;
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length; i++) {
      const e: unknown = v[i];
      const s = e === undefined ? 'null' : fastPayload(e, depth + 1);
      if (s === undefined) return undefined;
      out += i === 0 ? s : `,${s}`;
    }
    return `${out}]`;
  }
  if (!isPlain(v)) return undefined;
  const keys = Object.keys(v);
  let sorted = true;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    if (HIGH_KEY.test(k) || RESERVED.has(k)) return undefined;
    if (i > 0 && (keys[i - 1] as string) > k) sorted = false;
  }
  if (!sorted) sortSmall(keys);
  let out = '{';
  let first = true;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    const e = (v as Record<string, unknown>)[k];
    if (e === undefined) continue;
    const s = fastPayload(e, depth + 1);
    if (s === undefined) return undefined;
    out += `${first ? '' : ','}${plainText(k) ? `"${k}"` : JSON.stringify(k)}:${s}`;
    first = false;
  }
  return `${out}}`;
}

/** Sorts strings by code unit (as `Array.prototype.sort` does); insertion sort beats it on a few keys. */
function sortSmall(keys: string[]): void {
  if (keys.length > 8) {
    keys.sort();
    return;
  }
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i] as string;
    let j = i - 1;
    while (j >= 0 && (keys[j] as string) > k) {
      keys[j + 1] = keys[j] as string;
      j--;
    }
    keys[j + 1] = k;
  }
}

// A lowered `apply` spec derives its inputs template, payload and function from its handle
// on first use: lowering a million steps then builds none of them.
setLazyHooks({
  payload: (_spec, source) => fingerprintPayload(source as ArtifactStep<unknown>),
  inputs(spec, source) {
    const handle = source as ArtifactStep<unknown>;
    const fingerprint = getBackend().xxh64Hex(fingerprintPayload(handle));
    if (fingerprint !== spec.fingerprint) {
      throw new CairnError(
        'CAIRN_INVALID_SPEC',
        `Step "${spec.name}": its inputs were changed after lowering (config fingerprint now ${fingerprint}, lowered as ${String(spec.fingerprint)}); do not mutate inputs given to apply(), or lower again.`,
        { step: spec.name },
      );
    }
    return toTemplate(handle.inputs, handle.deps);
  },
  fn(spec, source) {
    const userFn = (source as ArtifactStep<unknown>).fn as unknown as (inputs: unknown, ctx: unknown) => unknown;
    return (outputPath, ctx) => userFn(resolveInputs(spec, outputPath, ctx.depPaths), ctx);
  },
});

function jsonIdent(spec: StepSpec): string {
  const name = spec.name, version = spec.version as string;
  return plainText(name) && plainText(version) ? `"${name}@${version}"` : JSON.stringify(`${name}@${version}`);
}

/** True when `JSON.stringify(s)` is just `s` in quotes (no `"`, `\\` or control characters), for short strings; false means "maybe not". */
function plainText(s: string): boolean {
  if (s.length > 32) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}

function lowerOne(handle: ArtifactStep<unknown>, deps: StepSpec[], provenance: Provenance): StepSpec {
  const name = handle.name;
  const mutable = isMutableVersion(handle.version);
  if (!mutable) {
    for (let i = 0; i < deps.length; i++) {
      const m = deps[i] as StepSpec;
      if (!m.mutable) continue;
      throw new CairnError(
        'CAIRN_MUTABLE_DEPENDENCY',
        `Step "${name}@${handle.version}" depends on mutable "${m.ident}": a fixed version cannot rest on a moving input. Give "${m.name}" a fixed version, or make "${name}" a dev version too.`,
        { step: name },
      );
    }
  }
  const fingerprint = getBackend().xxh64Hex(fingerprintPayload(handle));
  if (handle.expectedFingerprint !== undefined && handle.expectedFingerprint !== fingerprint) {
    throw new CairnError(
      'CAIRN_FINGERPRINT_MISMATCH',
      `Step "${name}@${handle.version}": its config fingerprint is ${fingerprint}, but ${handle.expectedFingerprint} is pinned. Restore the config, or bump the version and update expectedFingerprint.`,
      { step: name },
    );
  }
  const ref = getFnRef(handle.fn);
  if (handle.executor !== undefined && handle.executor !== 'inline' && ref === undefined) {
    throw new CairnError(
      'CAIRN_INLINE_FN_REMOTE',
      `Step "${name}": its function is an inline closure, which cannot run on executor "${handle.executor}". Export it and wrap it: export const ${handle.fn.name || 'myStep'} = defineStep(import.meta.url, '${handle.fn.name || 'myStep'}', fn).`,
      { step: name },
    );
  }
  return new StepSpec({ name, source: handle, deps, fingerprint, ref, provenance });
}

/** The canonical text of a lowered spec's `hashAttrs` (keys in code-point order), written directly. */
function attrsText(spec: StepSpec): string {
  const deps = spec.deps;
  let out = '{"deps":[';
  for (let i = 0; i < deps.length; i++) out += i === 0 ? jsonIdent(deps[i] as StepSpec) : `,${jsonIdent(deps[i] as StepSpec)}`;
  out += ']';
  if (spec.expectedFingerprint !== undefined) out += `,"expectedFingerprint":${JSON.stringify(spec.expectedFingerprint)}`;
  return `${out},"fingerprint":"${spec.fingerprint as string}","version":${JSON.stringify(spec.version)}}`;
}

/**
 * The specs made by one lowering, findable by `name@version` (to catch two different steps
 * sharing one). An open-addressing table of indices hashed on the name: a million-entry
 * `Map` of `name@version` strings costs several times more.
 */
class IdentTable {
  readonly specs: StepSpec[] = [];
  /** Pairs (index + 1, name hash); index 0 marks an empty slot. Hashes are compared before specs are touched. */
  #slots = new Int32Array(2048);

  find(name: string, version: string): StepSpec | undefined {
    const slots = this.#slots;
    const mask = (slots.length >> 1) - 1;
    const h = hashName(name);
    for (let p = h & mask; ; p = (p + 1) & mask) {
      const at = slots[2 * p] as number;
      if (at === 0) return undefined;
      if (slots[2 * p + 1] !== h) continue;
      const s = this.specs[at - 1] as StepSpec;
      if (s.name === name && s.version === version) return s;
    }
  }

  /** Adds `spec` (not already present); returns its index. */
  add(spec: StepSpec): number {
    const index = this.specs.push(spec) - 1;
    if (4 * this.specs.length > this.#slots.length) this.#rehash(2 * this.#slots.length);
    else this.#place(index, hashName(spec.name));
    return index;
  }

  #place(index: number, h: number): void {
    const slots = this.#slots;
    const mask = (slots.length >> 1) - 1;
    let p = h & mask;
    while ((slots[2 * p] as number) !== 0) p = (p + 1) & mask;
    slots[2 * p] = index + 1;
    slots[2 * p + 1] = h;
  }

  #rehash(size: number): void {
    const old = this.#slots;
    this.#slots = new Int32Array(size);
    for (let p = 0; p < old.length; p += 2) if (old[p] !== 0) this.#place((old[p] as number) - 1, old[p + 1] as number);
    this.#place(this.specs.length - 1, hashName((this.specs[this.specs.length - 1] as StepSpec).name));
  }
}

/** FNV-1a over the UTF-16 code units. */
function hashName(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h | 0;
}

/**
 * Lowers lazy handles to the `StepSpec` graph. Pure: never calls a step function and does
 * no file or network I/O (the one side effect is capturing provenance once per call).
 * Memoized by handle identity (a shared sub-graph is lowered once) and iterative (no
 * recursion, so million-step chains are fine). Steps given as `StepSpec` pass through.
 */
export function lower(handle: ArtifactStep<unknown> | StepSpec): StepSpec;
export function lower(handles: readonly (ArtifactStep<unknown> | StepSpec)[]): StepSpec[];
export function lower(input: ArtifactStep<unknown> | StepSpec | readonly (ArtifactStep<unknown> | StepSpec)[]): StepSpec | StepSpec[] {
  const single = !Array.isArray(input);
  const roots = (single ? [input] : input) as readonly unknown[];
  const provenance = captureProvenance();
  // Memo and stack state live on the handles, stamped with this call's epoch: no
  // million-entry maps to build and collect.
  const epoch = ++lowerEpoch;
  // New specs get node indices (on their traversal slots) as they are made, dependencies
  // first, so identities go to the backend's fingerprintAll without another walk.
  const walk = nextWalkEpoch();
  const names = new TableWriter();
  const attrs = new TableWriter();
  let offsets: Uint32Array<ArrayBuffer> = new Uint32Array(1024);
  let edges = new Uint32Array(4096);
  const made = new IdentTable();
  const passed: StepSpec[] = [];
  const out: StepSpec[] = [];
  const stack: ArtifactStep<unknown>[] = [];
  const next: number[] = [];
  for (let r = 0; r < roots.length; r++) {
    const root = roots[r];
    if (root instanceof StepSpec) {
      out.push(root);
      passed.push(root);
      continue;
    }
    if (!isArtifactStep(root)) {
      throw new CairnError('CAIRN_BAD_DEPENDENCY', `lower(): item ${r} is not a step handle (got ${root === null ? 'null' : typeof root}); pass handles returned by apply().`);
    }
    if (root._state(epoch) !== 2) {
      stack.push(root);
      next.push(0);
      root._mark(epoch, 1);
    }
    while (stack.length > 0) {
      const top = stack.length - 1;
      const h = stack[top] as ArtifactStep<unknown>;
      const i = next[top] as number;
      const hdeps = h.deps;
      if (i < hdeps.length) {
        next[top] = i + 1;
        const d = hdeps[i] as ArtifactStep<unknown>;
        const st = d._state(epoch);
        if (st === 0) {
          d._mark(epoch, 1);
          stack.push(d);
          next.push(0);
        } else if (st === 1) {
          throw new CairnError('CAIRN_GRAPH_CYCLE', `Step "${d.name}" depends on itself through ${h.name}. Break the cycle.`, { step: d.name });
        }
        continue;
      }
      stack.pop();
      next.pop();
      const depSpecs = new Array<StepSpec>(hdeps.length);
      for (let k = 0; k < hdeps.length; k++) depSpecs[k] = (hdeps[k] as ArtifactStep<unknown>)._lowered(epoch) as StepSpec;
      const spec = lowerOne(h, depSpecs, provenance);
      const prior = made.find(h.name, h.version);
      if (prior !== undefined) {
        const same = prior.fingerprint === spec.fingerprint && prior.deps.length === spec.deps.length && prior.deps.every((d, k) => d === spec.deps[k]);
        if (!same) {
          throw new CairnError(
            'CAIRN_DUPLICATE_STEP',
            `Two different steps are named "${h.name}" with version "${h.version}" (fingerprints ${prior.fingerprint} and ${spec.fingerprint}); they would share one output. Rename one, or give it another version.`,
            { step: h.name },
          );
        }
        h._mark(epoch, 2, prior);
        continue;
      }
      h._mark(epoch, 2, spec);
      const n = made.add(spec);
      spec._setSlot(walk, n);
      if (n + 2 > offsets.length) offsets = growU32(offsets, n + 2);
      let e = offsets[n] as number;
      if (e + depSpecs.length > edges.length) edges = growU32(edges, e + depSpecs.length);
      for (let k = 0; k < depSpecs.length; k++) edges[e++] = (depSpecs[k] as StepSpec)._slot(walk);
      offsets[n + 1] = e;
      names.add(spec.name);
      attrs.add(attrsText(spec));
    }
    out.push(root._lowered(epoch) as StepSpec);
  }
  const n = made.specs.length;
  if (n > 0) {
    const result = getBackend().fingerprintAll({ offsets: offsets.subarray(0, n + 1), deps: edges.subarray(0, offsets[n]) }, names.table(), attrs.table());
    applyHashes(made.specs, result);
  }
  if (passed.length > 0) computeIdentities(passed);
  return single ? (out[0] as StepSpec) : out;
}
