/**
 * Configuration of the S3 client. What the options object leaves out comes from the standard
 * AWS configuration, read by the SDK itself: `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`/
 * `AWS_SESSION_TOKEN`, `AWS_PROFILE`, `AWS_REGION`, `AWS_ENDPOINT_URL_S3`/`AWS_ENDPOINT_URL`, the
 * shared `~/.aws/config` and `~/.aws/credentials` files (`AWS_CONFIG_FILE`,
 * `AWS_SHARED_CREDENTIALS_FILE`), SSO, `credential_process`, web identity and instance metadata.
 */
import { S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import type { Scrubber } from './errors.js';
import { retryStrategy, type RetryOptions } from './retry.js';

/** Static credentials (an HMAC key pair for GCS's S3-compatible endpoint). */
export interface S3Credentials {
  /** Access key id. */
  readonly accessKeyId: string;
  /** Secret access key. */
  readonly secretAccessKey: string;
  /** Session token of temporary credentials. */
  readonly sessionToken?: string;
}

/** Where log lines of the store go. */
export interface S3Logger {
  /** Something the user must know (an unsafe mode, a retry storm). */
  warn(message: string): void;
  /** Progress. */
  info?(message: string): void;
}

/** How to reach the object store: what Cairn's config file passes. Every field is optional. */
export interface S3ClientOptions {
  /** Endpoint URL of an S3-compatible service (`http://127.0.0.1:7480`, `https://storage.googleapis.com`). @default the AWS configuration, else AWS S3 */
  readonly endpoint?: string;
  /** Region (signing). @default the AWS configuration; `us-east-1` when an endpoint is given and no region is configured */
  readonly region?: string;
  /** Path-style addressing (`endpoint/bucket/key`), which most self-hosted gateways need. @default true when `endpoint` is given, else false */
  readonly forcePathStyle?: boolean;
  /** Profile of the shared config/credentials files. @default `AWS_PROFILE`, else `default` */
  readonly profile?: string;
  /** Static credentials. @default the SDK's default provider chain */
  readonly credentials?: S3Credentials;
  /** Retries of throttled, failed and reset requests. */
  readonly retry?: RetryOptions;
  /** Time to establish a connection, ms. @default 5_000 */
  readonly connectTimeoutMs?: number;
  /** Time to wait for a response, ms. @default 60_000 */
  readonly requestTimeoutMs?: number;
  /** Sockets per host. @default 128 */
  readonly maxSockets?: number;
}

function envEndpoint(): string | undefined {
  return process.env.AWS_ENDPOINT_URL_S3 ?? process.env.AWS_ENDPOINT_URL;
}

/** A description of where requests go, with no secret in it (for messages). */
export function describeTarget(options: S3ClientOptions): string {
  const endpoint = options.endpoint ?? envEndpoint() ?? 'AWS S3';
  const profile = options.profile ?? process.env.AWS_PROFILE;
  return `${endpoint}${profile ? ` (profile ${profile})` : ''}`;
}

/** Builds the client; remembers static credentials in `scrubber` so no message can carry them. */
export function createClient(options: S3ClientOptions, scrubber: Scrubber): S3Client {
  const endpoint = options.endpoint;
  const hasEndpoint = endpoint !== undefined || envEndpoint() !== undefined;
  const region = options.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? (hasEndpoint ? 'us-east-1' : undefined);
  if (options.credentials) scrubber.add(options.credentials.accessKeyId, options.credentials.secretAccessKey, options.credentials.sessionToken);
  scrubber.add(process.env.AWS_SECRET_ACCESS_KEY, process.env.AWS_SESSION_TOKEN, process.env.AWS_ACCESS_KEY_ID);
  const config: S3ClientConfig = {
    ...(endpoint !== undefined ? { endpoint } : {}),
    ...(region !== undefined ? { region } : {}),
    forcePathStyle: options.forcePathStyle ?? hasEndpoint,
    ...(options.profile !== undefined ? { profile: options.profile } : {}),
    ...(options.credentials ? { credentials: { ...options.credentials } } : {}),
    maxAttempts: options.retry?.maxAttempts ?? 6,
    retryStrategy: retryStrategy(options.retry),
    requestHandler: {
      connectionTimeout: options.connectTimeoutMs ?? 5_000,
      requestTimeout: options.requestTimeoutMs ?? 60_000,
      httpAgent: { keepAlive: true, maxSockets: options.maxSockets ?? 128 },
      httpsAgent: { keepAlive: true, maxSockets: options.maxSockets ?? 128 },
    },
    // Integrity is checked by this package (sizes and MD5 ETags, see outputs.ts); the SDK's
    // default CRC32 trailers are refused by some S3-compatible services (GCS, older gateways).
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  };
  return new S3Client(config);
}

/** Resolves the client's credentials once (so the scrubber knows them); errors are left to the first request. */
export async function learnCredentials(client: S3Client, scrubber: Scrubber): Promise<void> {
  try {
    const creds = await client.config.credentials();
    scrubber.add(creds.accessKeyId, creds.secretAccessKey, creds.sessionToken);
  } catch {
    // No credentials: the first request fails with a clear error (see connect.ts).
  }
}
