/**
 * Registers this package's command runner with `@cairn/core`, so command steps run wherever
 * the runner (or its worker) is loaded: in-process through `spec.fn`, in threads and processes
 * through `resolveFnRef`.
 */
import { registerCommandRunner } from '@cairn/core/internal';
import { runCommand } from './run-command.js';

registerCommandRunner(runCommand);
