/**
 * A spec built with `new StepSpec(init)`: its init checked, each bad field a typed error naming
 * the step and the fix, and its fields as the spec keeps them.
 */
import { isStepSpec } from './brand.js';
import { canonicalize } from './canonical.js';
import { CairnError } from './errors.js';
import { getFnRef, getRemoteOptions } from './fnref.js';
import { checkKnownKeys } from './known-keys.js';
import { checkLocation } from './paths.js';
import type { StepSpec } from './spec.js';
import type { StepKind, StepSpecInit } from './spec-types.js';
import { checkResources, checkRetries, checkSpecFields, checkTimeout, deepFreezeCopy, STEP_SPEC_KEYS } from './step-checks.js';
import type { FnRef, PathStepFn, Provenance, Resources } from './types.js';
import { checkExecutorName, isMutableVersion, validateSegment } from './validate.js';

/** The fields of a spec built with `new StepSpec(init)`. */
export interface PlainFields {
  readonly name: string;
  readonly resources: Resources | undefined;
  readonly executor: string | undefined;
  readonly writesRecord: boolean;
  readonly ref: FnRef | undefined;
  readonly kind: StepKind;
  readonly version: string | undefined;
  readonly fingerprint: string | undefined;
  readonly expectedFingerprint: string | undefined;
  readonly mutable: boolean;
  readonly retries: number;
  readonly timeoutMs: number | undefined;
  readonly provenance: Provenance | undefined;
  readonly fn: PathStepFn | undefined;
  readonly hashAttrs: Readonly<Record<string, unknown>>;
  readonly inputs: unknown;
  readonly payload: string | undefined;
  readonly override: string | undefined;
  /** Canonical hashAttrs; dropped once the hash is known (recomputed on demand). */
  attrsCanon: string | undefined;
}

/** The checked fields and dependencies of a spec built from `init` (throws for a bad one). */
export function plainFields(init: StepSpecInit): { fields: PlainFields; deps: readonly StepSpec[] } {
  const name = validateSegment('name', init.name);
  checkKnownKeys(init, STEP_SPEC_KEYS, `new StepSpec() for step "${name}"`, { step: name });
  checkSpecFields(name, init as unknown as Record<string, unknown>);
  const deps = init.deps === undefined ? [] : init.deps;
  if (!Array.isArray(deps)) throw new CairnError('CAIRN_BAD_DEPENDENCY', `Step "${name}": deps must be an array of StepSpec.`, { step: name });
  for (let i = 0; i < deps.length; i++) {
    if (!isStepSpec(deps[i])) {
      throw new CairnError(
        'CAIRN_BAD_DEPENDENCY',
        `Step "${name}": deps[${i}] is not a StepSpec (got ${deps[i] === null ? 'null' : typeof deps[i]}); pass the upstream StepSpec itself, not its path or name.`,
        { step: name },
      );
    }
  }
  if (init.fn !== undefined && typeof init.fn !== 'function') {
    throw new CairnError('CAIRN_INVALID_SPEC', `Step "${name}": fn must be a function.`, { step: name });
  }
  const attrs = init.hashAttrs ?? {};
  const attrsCanon = canonicalize(attrs, { path: 'hashAttrs', step: name });
  const remoteOpts = getRemoteOptions(init.fn);
  const override = init.overrideOutputPath === undefined ? undefined : checkLocation('overrideOutputPath', init.overrideOutputPath, name);
  if (init.executor !== undefined) checkExecutorName(init.executor, `Step "${name}": executor`, 'CAIRN_INVALID_SPEC', name);
  const executor = init.executor ?? remoteOpts?.executor;
  const version = init.version === undefined ? undefined : validateSegment('version', init.version, name);
  return {
    deps: Object.freeze([...deps]),
    fields: {
      name,
      resources: checkResources(name, init.resources === undefined ? remoteOpts?.resources : init.resources),
      executor,
      writesRecord: init.writesRecord ?? false,
      ref: init.ref ?? getFnRef(init.fn),
      kind: init.kind ?? 'path',
      version,
      fingerprint: init.fingerprint,
      expectedFingerprint: init.expectedFingerprint,
      mutable: version !== undefined && isMutableVersion(version),
      retries: checkRetries(name, init.retries),
      timeoutMs: checkTimeout(name, init.timeoutMs),
      provenance: init.provenance,
      fn: init.fn,
      hashAttrs: deepFreezeCopy(attrs),
      inputs: init.inputs,
      payload: init.fingerprintPayload,
      override,
      attrsCanon,
    },
  };
}
