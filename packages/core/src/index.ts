/**
 * @cairn/core — lazy handles, pure lowering, immutable StepSpecs, canonical encoding,
 * fingerprints, graph utilities and the msgpack codec.
 */
export { apply, ArtifactStep, OUT, isArtifactStep, isOut } from './handle.js';
export type { ApplyFn, ApplyOptions, ApplyRuntimeOptions, Layout, Lazy, LoadedValue, Out } from './handle.js';
export { artifacts, checkKind, isResultKind, kindMismatch } from './artifact.js';
export type { AnyKind, ArtifactKind, DirArtifact, KindValue, LoadContext, ResultKind } from './artifact.js';
export { adopt, adoptedNotLocal } from './adopt.js';
export type { AdoptOptions } from './adopt.js';
export { checkRecordable } from './recordable.js';
export { lower } from './lower.js';
export type { LowerOptions } from './lower.js';
export { materializedConfig } from './materialize.js';
export type { MaterializedConfig, MaterializeOptions } from './materialize.js';
export { resolveInputs, resolveTemplate, DepSlot } from './template.js';
export { fingerprintPayload } from './payload.js';
export { StepSpec } from './spec.js';
export { isStepSpec } from './brand.js';
export type { StepKind, StepSpecInit } from './spec.js';
export { defineStep, getFnRef, remote, getRemoteOptions, resolveFnRef, formatFnRef } from './fnref.js';
export type { RemoteOptions } from './fnref.js';
export { canonicalize, compareCodePoints } from './canonical.js';
export type { CanonicalOptions } from './canonical.js';
export { fingerprint, describeDrift } from './fingerprint.js';
export type { DriftOptions } from './fingerprint.js';
export { computeIdentities, identityText } from './identity.js';
export { encodeSpecs, decodeSpecs, collectSpecs, packValue, unpackValue, SPEC_FORMAT_VERSION } from './codec.js';
export { makeTask, encodeTask, decodeTask } from './task.js';
export type { TaskPayload, TaskStoreAccess } from './task.js';
export { indexSpecs, detectCycle, formatCycle, toposortSpecs, expandSpecs } from './specgraph.js';
export type { IndexedGraph, CycleReport } from './specgraph.js';
export { getBackend, backend, backendReason } from './backend.js';
export type { BackendKind, CoreBackend, CsrGraph, ByteTable, OrderResult, FingerprintResult, Xxh64Stream } from './backend-types.js';
export { CairnError, isCairnError, hasCode } from './errors.js';
export type { CairnErrorCode, CairnErrorOptions } from './errors.js';
export { joinPath, isAbsoluteLocation, hasScheme, checkLocation, resolvePrefix } from './paths.js';
export type { LocationKind } from './paths.js';
export { validateSegment, isMutableVersion, isCalendarVersion, checkVersionRule, type VersionRule, checkExecutorName, EXECUTOR_NAME, RESERVED_SEGMENT } from './validate.js';
export { checkKnownKeys, nearestName, describeValue } from './known-keys.js';
export type { KnownKeysOptions } from './known-keys.js';
export { MAX_VALUE_DEPTH } from './limits.js';
export { MAX_TIMEOUT_MS } from './step-checks.js';
export { captureProvenance } from './provenance.js';
export type { FnRef, GpuRequest, PathStepFn, Provenance, Resources, StepContext, StepLogger } from './types.js';
