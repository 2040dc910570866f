/**
 * The executor client a running step can use to submit more work, reachable as `ctx.client`
 * and through {@link currentClient}. Values the caller keeps in its own `AsyncLocalStorage`
 * around `run()` stay visible inside in-process steps.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { type ArtifactStep, CairnError, type StepSpec } from '@cairn/core';

/**
 * A built artifact: its output path and its value, loaded by the step's artifact kind (a step
 * without one: the value it returned, from its record; absent when it returned none).
 */
export interface LoadedArtifact<T = unknown> {
  /** Output path (an adopted artifact's: its source). */
  readonly path: string;
  /** The loaded value. */
  readonly value: T;
}

/** Submits work to the runner that runs the current step. */
export interface ExecutorClient {
  /** Runs one step (and whatever upstream is missing) and loads it. */
  submit<T>(step: ArtifactStep<T> | StepSpec): Promise<LoadedArtifact<T>>;
  /** Runs steps and loads them, in argument order. */
  run(...steps: (ArtifactStep<unknown> | StepSpec)[]): Promise<LoadedArtifact[]>;
}

/** @internal Holds the client while an in-process step runs. */
export const clientStorage = new AsyncLocalStorage<ExecutorClient>();

/** The executor client of the step running in this async context. Throws outside a step. */
export function currentClient(): ExecutorClient {
  const c = clientStorage.getStore();
  if (c === undefined) {
    throw new CairnError('CAIRN_CONFIG', 'currentClient() was called outside a running step; call it from inside a step function (or use ctx.client).');
  }
  return c;
}
