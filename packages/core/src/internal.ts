/**
 * @cairn/core/internal — for Cairn's own packages only (the runner), not for pipelines or
 * plugins: no compatibility promise. It reaches what StepSpec keeps out of its public type.
 */
export { specInternals } from './spec-internals.js';
export type { SpecInternals } from './spec.js';
export { LoweringSession, loweringWork } from './lower.js';
// The runner's hooks into core: command steps run by the runner, secret values it resolves.
export { commandRunner, registerCommandRunner } from './command-ref.js';
export type { CommandRunner } from './command-ref.js';
export { revealSecrets, SECRET_TAG, SECRET_VALUES, taggedSecretName } from './secret.js';
