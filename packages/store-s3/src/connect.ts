/**
 * The check before anything runs: the bucket exists, the credentials are accepted, the endpoint
 * answers, and the provider enforces conditional writes. Each failure is ONE `CAIRN_STORE`
 * error that names the prefix, the endpoint and the fix (never a credential).
 */
import { CairnError } from '@cairn/core';
import { type Scrubber, statusOf, toFailure } from './errors.js';
import type { S3Objects } from './objects.js';
import { probeProvider, type ProviderCapabilities } from './probe.js';
import { dirKey, type S3Location, s3Url } from './url.js';

const NETWORK = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'TimeoutError', 'RequestTimeout']);
const CREDENTIALS = new Set(['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'AccessDenied', 'InvalidToken', 'ExpiredToken', 'TokenRefreshRequired', 'CredentialsProviderError']);

const CREDENTIALS_FIX =
  'Check AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE and ~/.aws/credentials, or the credentials in Cairn’s config (for GCS: an HMAC key of a service account that may read and write the bucket).';

/** Turns the first request's failure into the one error a user sees. */
export function connectError(loc: S3Location, target: string, err: unknown, scrubber: Scrubber): CairnError {
  const f = toFailure(err, scrubber);
  const url = s3Url(loc);
  const base = { cause: f };
  if (f.code === 'NoSuchBucket' || (f.status === 404 && f.code === 'NotFound')) {
    return new CairnError('CAIRN_STORE', `The bucket "${loc.bucket}" of the store prefix ${url} does not exist at ${target}. Nothing was run. Create it (aws s3 mb s3://${loc.bucket}) or fix the prefix.`, base);
  }
  if (CREDENTIALS.has(f.code) || f.status === 403 || /credential/i.test(f.message)) {
    return new CairnError('CAIRN_STORE', `The object store at ${target} refused the credentials for ${url} (${f.code}). Nothing was run. ${CREDENTIALS_FIX}`, base);
  }
  if (/region is missing/i.test(f.message)) {
    return new CairnError('CAIRN_STORE', `No region is configured for ${url} at ${target}. Nothing was run. Set AWS_REGION, a region in the profile, or region in Cairn’s config.`, base);
  }
  if (NETWORK.has(f.code) || f.status === undefined) {
    return new CairnError(
      'CAIRN_STORE',
      `Cannot reach the object store at ${target} for ${url} (${f.code}: ${f.message}). Nothing was run. Check the endpoint (AWS_ENDPOINT_URL, the profile’s endpoint_url, or endpoint in Cairn’s config) and that the service is up.`,
      { ...base, retryable: true },
    );
  }
  return new CairnError('CAIRN_STORE', `The object store at ${target} cannot be used for ${url} (${f.code}, HTTP ${String(f.status)}): ${f.message}. Nothing was run. Check the bucket’s permissions.`, base);
}

/** Unwraps the S3Failure that an objects.ts error carries, to map it like a raw SDK error. */
function rootCause(err: unknown): unknown {
  const c = (err as { cause?: unknown } | undefined)?.cause;
  return c !== undefined && (err as { code?: string }).code === 'CAIRN_STORE' ? c : err;
}

/**
 * Lists one key under the prefix (reachability, bucket, credentials), then probes conditional
 * writes. Throws one `CAIRN_STORE` error; with `unsafeNoLeases` a provider without conditional
 * writes is accepted (the caller logs it).
 */
/** One LIST of the prefix: the endpoint answers, the credentials work, the bucket exists. Writes nothing. */
export async function checkReadable(objects: S3Objects, loc: S3Location, target: string, scrubber: Scrubber): Promise<void> {
  try {
    await objects.list(loc.bucket, { prefix: dirKey(loc.key), maxKeys: 1 });
  } catch (err) {
    throw connectError(loc, target, rootCause(err), scrubber);
  }
}

export async function checkStore(objects: S3Objects, loc: S3Location, target: string, scrubber: Scrubber, unsafeNoLeases: boolean): Promise<ProviderCapabilities> {
  const prefix = dirKey(loc.key);
  await checkReadable(objects, loc, target, scrubber);
  let caps: ProviderCapabilities;
  try {
    caps = await probeProvider(objects, loc.bucket, prefix);
  } catch (err) {
    const cause = rootCause(err);
    if (statusOf(cause) === 403) {
      throw new CairnError('CAIRN_STORE', `The store prefix ${s3Url(loc)} at ${target} can be listed but not written (${toFailure(cause, scrubber).code}). Nothing was run. Grant s3:PutObject and s3:DeleteObject on it, or choose another prefix.`, { cause: toFailure(cause, scrubber) });
    }
    throw connectError(loc, target, cause, scrubber);
  }
  if (!caps.conditionalWrites && !unsafeNoLeases) {
    throw new CairnError(
      'CAIRN_STORE',
      `The object store at ${target} does not enforce conditional writes (${caps.missing ?? 'unknown'}), so leases on ${s3Url(loc)} cannot be safe: two runners could build one step at once. Nothing was run. Use a provider that honours If-None-Match and If-Match on PUT (AWS S3, Ceph RGW 16+), or pass unsafeNoLeases: true if only one runner ever uses this prefix.`,
    );
  }
  return caps;
}
