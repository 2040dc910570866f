/**
 * @cairn/store-s3 — Cairn's artifact store in an S3-compatible object store (AWS S3, Ceph RADOS
 * Gateway, GCS through its S3-compatible endpoint): statuses, records and leases as objects,
 * leases and commits guarded by conditional writes, batched LIST reads, verified uploads.
 */
export { S3Store } from './store.js';
export { s3StoreFactory } from './factory.js';
export { checkS3StoreOptions } from './options.js';
export { createStepAccess, stepS3 } from './step-access.js';
export { S3Primitives, stepDir } from './primitives.js';
export { S3Objects } from './objects.js';
export { S3Leases } from './leases.js';
export { StepLister } from './listing.js';
export { StateReader } from './states.js';
export { InputCache, downloadPrefix } from './inputs.js';
export { uploadDirectory } from './outputs.js';
export { probeProvider } from './probe.js';
export { RequestCounter, diffCounts } from './counter.js';
export { retryDelay } from './retry.js';
export { S3Failure } from './errors.js';
export { parseS3Url, s3Url, dirKey } from './url.js';
export { unquote } from './etag.js';

export type { S3StoreOptions } from './store.js';
export type { S3StepAccess } from './step-access.js';
export type { S3PrimitivesOptions } from './primitives.js';
export type { S3ClientOptions, S3Credentials, S3Logger } from './config.js';
export type { ObjectHead, GotObject, ListPage, ListArgs } from './objects.js';
export type { HeldLease, ObservedLease } from './leases.js';
export type { StepObjects } from './listing.js';
export type { StepDir } from './states.js';
export type { UploadedFile, UploadOptions } from './outputs.js';
export type { ProviderCapabilities } from './probe.js';
export type { RequestCounts } from './counter.js';
export type { RetryOptions } from './retry.js';
export type { S3Location } from './url.js';
