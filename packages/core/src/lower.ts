import { canonicalize } from './canonical.js';
import { CairnError } from './errors.js';
import { getFnRef } from './fnref.js';
import { type ArtifactStep, isArtifactStep, isOut, OUT } from './handle.js';
import { computeIdentities } from './identity.js';
import { captureProvenance } from './provenance.js';
import { StepSpec } from './spec.js';
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
 * The in-process function of an `apply` step. Built in its own scope so the closure keeps
 * only the user function and the spec alive, not lowering's temporaries.
 */
function bindApply(userFn: (inputs: unknown, ctx: unknown) => unknown): { fn: NonNullable<StepSpec['fn']>; bind: (spec: StepSpec) => void } {
  let spec: StepSpec | undefined;
  return {
    fn: (outputPath, ctx) => userFn(resolveInputs(spec as StepSpec, outputPath, ctx.depPaths), ctx),
    bind: (s) => {
      spec = s;
    },
  };
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
  return canonicalize(handle.inputs, {
    path: 'inputs',
    step: handle.name,
    replace: (v) => (isArtifactStep(v) ? `<dep:${v.ident}>` : isOut(v) ? '<OUT>' : undefined),
  });
}

function lowerOne(handle: ArtifactStep<unknown>, deps: StepSpec[], provenance: Provenance): StepSpec {
  const name = handle.name;
  const mutable = isMutableVersion(handle.version);
  if (!mutable) {
    const m = deps.find((d) => d.mutable);
    if (m) {
      throw new CairnError(
        'CAIRN_MUTABLE_DEPENDENCY',
        `Step "${name}@${handle.version}" depends on mutable "${m.ident}": a fixed version cannot rest on a moving input. Give "${m.name}" a fixed version, or make "${name}" a dev version too.`,
        { step: name },
      );
    }
  }
  const payload = fingerprintPayload(handle);
  const fingerprint = getBackend().xxh64Hex(payload);
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
  const depIdents = new Array<string>(deps.length);
  for (let i = 0; i < deps.length; i++) depIdents[i] = (deps[i] as StepSpec).ident;
  const hashAttrs: Record<string, unknown> = { version: handle.version, fingerprint, deps: depIdents };
  // The canonical form of hashAttrs, written directly (keys in code-point order).
  let attrsCanonical = '{"deps":[';
  for (let i = 0; i < depIdents.length; i++) attrsCanonical += (i ? ',' : '') + JSON.stringify(depIdents[i]);
  attrsCanonical += ']';
  if (handle.expectedFingerprint !== undefined) {
    hashAttrs.expectedFingerprint = handle.expectedFingerprint;
    attrsCanonical += `,"expectedFingerprint":${JSON.stringify(handle.expectedFingerprint)}`;
  }
  attrsCanonical += `,"fingerprint":"${fingerprint}","version":${JSON.stringify(handle.version)}}`;
  const runner = bindApply(handle.fn as unknown as (inputs: unknown, ctx: unknown) => unknown);
  const spec = new StepSpec({
    attrsCanonical,
    owned: true,
    name,
    kind: 'apply',
    fn: runner.fn,
    ref,
    inputs: toTemplate(handle.inputs, handle.deps),
    hashAttrs,
    deps,
    resources: handle.resources,
    executor: handle.executor,
    overrideOutputPath: handle.pin ?? `${name}/${handle.version}`,
    fingerprintPayload: payload,
    version: handle.version,
    fingerprint,
    expectedFingerprint: handle.expectedFingerprint,
    retries: handle.retries,
    timeoutMs: handle.timeoutMs,
    provenance,
  });
  runner.bind(spec);
  return spec;
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
  const byIdent = new Map<string, StepSpec>();
  const out: StepSpec[] = [];
  const stack: ArtifactStep<unknown>[] = [];
  const next: number[] = [];
  for (let r = 0; r < roots.length; r++) {
    const root = roots[r];
    if (root instanceof StepSpec) {
      out.push(root);
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
      if (i < h.deps.length) {
        next[top] = i + 1;
        const d = h.deps[i] as ArtifactStep<unknown>;
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
      const depSpecs = new Array<StepSpec>(h.deps.length);
      for (let k = 0; k < h.deps.length; k++) depSpecs[k] = (h.deps[k] as ArtifactStep<unknown>)._lowered(epoch) as StepSpec;
      const spec = lowerOne(h, depSpecs, provenance);
      const ident = `${h.name}@${h.version}`;
      const prior = byIdent.get(ident);
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
      } else {
        byIdent.set(ident, spec);
        h._mark(epoch, 2, spec);
      }
    }
    out.push(root._lowered(epoch) as StepSpec);
  }
  computeIdentities(out);
  return single ? (out[0] as StepSpec) : out;
}
