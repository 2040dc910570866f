/** Secrets: provider types, the option check, a run's resolver and the masker. */
export { checkSecretsOptions } from './check.js';
export { RunSecrets } from './resolver.js';
export { Masker, maskError, maskFile, maskText } from './mask.js';
export type { CommandProvider, EnvProvider, FileProvider, SecretProvider, SecretsOptions } from './types.js';
