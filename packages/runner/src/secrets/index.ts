/** Secrets: provider types, the option check, a run's resolver, the masker and what readers of a running log show. */
export { checkSecretsOptions } from './check.js';
export { RunSecrets } from './resolver.js';
export { Masker, maskError, maskFile, maskSoFar, maskText } from './mask.js';
export { LiveLogMasks, type LiveLogView } from './live-mask.js';
export { maskedLogWriter, type MaskedLogWriter } from './masked-writer.js';
export type { CommandProvider, EnvProvider, FileProvider, SecretProvider, SecretsOptions } from './types.js';
