/**
 * Step-side store access: `ctx.localInput(dep)` on every built-in executor (a filesystem store
 * returns the dependency's path; a store with step access fetches it), and `ctx.store` from the
 * store itself in-process or from the builder a worker re-imports (`task.storeAccess`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { StepSpec } from '@cairn/core';
import { LocalStore, StepRunner, type StepStoreAccess } from '../src/index.js';
import type { StepAccessRef } from '../src/store/kit.js';
import { ignoreAccess, seeAccess, touchStore } from './fixtures/step-access.mjs';

const FIXTURE = new URL('./fixtures/step-access.mjs', import.meta.url).href;
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const EXECUTORS = ['inline', 'threads', 'process'] as const;

/** A filesystem store that also offers step access, as an object store does. */
class AccessStore extends LocalStore {
  readonly stepAccessRef: StepAccessRef;
  constructor(exportName = 'fakeAccess') {
    super();
    this.stepAccessRef = { module: FIXTURE, export: exportName, options: { tag: 'configured' } };
  }
  stepAccess(path: string): StepStoreAccess {
    return { store: { tag: 'configured', path, where: 'runner' }, localInput: async (p) => `fetched ${p}` };
  }
}

describe('ctx.localInput and ctx.store', () => {
  const root = mkdtempSync(join(tmpdir(), 'cairn-step-access-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  let n = 0;
  const prefix = () => join(root, `p${n++}`);

  it.each(EXECUTORS)('filesystem store, %s: localInput returns the dependency path (by nameWithHash or path); ctx.store is absent', async (executor) => {
    const p = prefix();
    const up = new StepSpec({ name: 'up', fn: () => 1 });
    const step = new StepSpec({ name: 'see', fn: seeAccess, deps: [up], executor });
    const [seen] = await new StepRunner({ prefix: p, logger: quiet }).load([step]);
    expect(seen?.value).toEqual({
      store: null,
      byKey: up.outputPath(p),
      byPath: up.outputPath(p),
      notADep: `CAIRN_BAD_DEPENDENCY: Step "see": ctx.localInput("nope-0123") names none of its dependencies (${up.nameWithHash}); pass a dependency's nameWithHash (a key of ctx.depPaths) or its output path.`,
    });
  });

  it.each(EXECUTORS)('a store with step access, %s: ctx.store and the fetched input come from the store (in-process) or its re-imported builder (workers)', async (executor) => {
    const p = prefix();
    const up = new StepSpec({ name: 'up', fn: () => 1 });
    const step = new StepSpec({ name: 'see', fn: seeAccess, deps: [up], executor });
    const [seen] = await new StepRunner({ prefix: p, store: new AccessStore(), logger: quiet }).load([step]);
    const where = executor === 'inline' ? 'runner' : executor === 'threads' ? 'thread' : expect.stringMatching(/^process \d+$/);
    expect(seen?.value).toEqual({
      store: { tag: 'configured', path: step.outputPath(p), where },
      byKey: `fetched ${up.outputPath(p)}`,
      byPath: `fetched ${up.outputPath(p)}`,
      notADep: expect.stringMatching(/^CAIRN_BAD_DEPENDENCY: /),
    });
  });

  it('a builder that cannot be loaded where the step runs fails only the steps that use ctx.store, naming the module and the fix', async () => {
    const p = prefix();
    const runner = new StepRunner({ prefix: p, store: new AccessStore('brokenAccess'), logger: quiet });
    const [fine] = await runner.load([new StepSpec({ name: 'fine', fn: ignoreAccess, executor: 'threads' })]);
    expect(fine?.value).toBe('fine');
    const err = await runner.run([new StepSpec({ name: 'touch', fn: touchStore, executor: 'threads' })]).catch((e: unknown) => e);
    const failure = (err as { failures: { error: { code: string; message: string } }[] }).failures[0]?.error;
    expect(failure?.code).toBe('CAIRN_STORE');
    expect(failure?.message).toMatch(/^Step "touch": the store's step access \(.*step-access\.mjs#brokenAccess, for ctx\.store and ctx\.localInput\) cannot be loaded where the step runs: the SDK is not installed here\. Install .*step-access\.mjs there, or run the step on an executor on the runner's host\./);
  });
});
