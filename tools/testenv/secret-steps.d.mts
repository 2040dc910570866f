import type { StepContext } from '@cairn/core';

/** Waits `holdMs`, writes the token's hash to `hash` in its output, returns it (and whether the worker's environment still holds the value). */
export declare const hashToken: (inputs: { token: string; holdMs?: number }, ctx: StepContext) => Promise<{ hash: string; envHasIt: boolean }>;
