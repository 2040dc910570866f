/**
 * The store registry: the runner picks its store by the prefix's scheme from factories that
 * declare their schemes as data, as executors are registered. Issue 17: `new StepRunner({ prefix:
 * 's3://bucket/x' })` answered "The local store cannot hold s3://bucket/x" only at the first run,
 * and there was no way to name a store for a scheme.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { StepSpec } from '@cairn/core';
import { builtinStores, LocalStore, MemoryStore, schemeOf, StepRunner, type StoreFactory } from '../src/index.js';
import { checkStepRunnerOptions } from '../src/options.js';
import { thrown } from './helpers/thrown.js';


const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** A factory of memory stores for `mem://`, remembering what it was asked. */
function memFactory(): StoreFactory & { calls: { options: unknown; prefix: string }[] } {
  const calls: { options: unknown; prefix: string }[] = [];
  return {
    name: 'mem',
    schemes: ['mem'],
    calls,
    create(options, prefix) {
      calls.push({ options, prefix });
      return new MemoryStore();
    },
  };
}

describe('store registry', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-stores-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('schemes: plain paths are file, URLs by their scheme in lower case', () => {
    expect(schemeOf('/data/x')).toBe('file');
    expect(schemeOf('file:///data/x')).toBe('file');
    expect(schemeOf('S3://b/x')).toBe('s3');
    expect(schemeOf('gs://b')).toBe('gs');
    expect(builtinStores.map((f) => [f.name, f.schemes])).toEqual([['local', ['file']]]);
  });

  it('the local store serves plain paths and file:// URLs', async () => {
    expect(new StepRunner({ prefix: dir }).store).toBeInstanceOf(LocalStore);
    const runner = new StepRunner({ prefix: pathToFileURL(join(dir, 'f')).href, logger: quiet });
    expect(runner.store.kind).toBe('local');
    const step = new StepSpec({ name: 'a', fn: () => 1 });
    expect((await runner.run([step])).counts).toEqual({ succeeded: 1 });
  });

  it('an unknown scheme is CAIRN_STORE naming the prefix, the registered schemes and the fix, at construction', () => {
    const err = thrown(() => new StepRunner({ prefix: 's3://bucket/x' }));
    expect(err.code).toBe('CAIRN_STORE');
    expect(err.message).toBe(
      'No store is registered for the prefix s3://bucket/x (scheme s3://). Registered: file:// and plain paths. Register a store plugin for s3:// (new StepRunner({ stores: [factory] }), or stores in cairn.config.ts; e.g. s3StoreFactory() of @cairn/store-s3 for s3://), pass store: explicitly, or use a filesystem prefix.',
    );
    expect(thrown(() => new StepRunner({ prefix: 'gs://b/x', stores: [memFactory()] })).message).toMatch(/prefix gs:\/\/b\/x \(scheme gs:\/\/\)\. Registered: file:\/\/ and plain paths, mem:\/\/\./);
  });

  it('a prefix from CAIRN_PREFIX with an unknown scheme fails the run, before anything runs', async () => {
    const old = process.env.CAIRN_PREFIX;
    process.env.CAIRN_PREFIX = 'gs://bucket/env';
    try {
      const runner = new StepRunner({ logger: quiet });
      let ran = 0;
      const err = await runner.run([new StepSpec({ name: 'a', fn: () => ++ran })]).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'CAIRN_STORE', message: expect.stringContaining('prefix gs://bucket/env') });
      expect(ran).toBe(0);
    } finally {
      if (old === undefined) delete process.env.CAIRN_PREFIX;
      else process.env.CAIRN_PREFIX = old;
    }
  });

  it('a registered factory serves its scheme: made once, with its storeOptions and the prefix', async () => {
    const mem = memFactory();
    const runner = new StepRunner({ prefix: 'mem://pool/a', stores: [mem], storeOptions: { mem: { size: 3 } }, logger: quiet });
    expect(runner.store).toBeInstanceOf(MemoryStore);
    const step = new StepSpec({ name: 'a', fn: () => 7 });
    expect((await runner.run([step])).counts).toEqual({ succeeded: 1 });
    expect((await runner.run([step])).counts).toEqual({ cached: 1 });
    const [loaded] = await runner.load([step]);
    expect(loaded).toEqual({ path: step.outputPath('mem://pool/a'), value: 7 });
    expect(mem.calls).toEqual([{ options: { size: 3 }, prefix: 'mem://pool/a' }]);
  });

  it('an explicit store wins over the registry; a factory for file replaces the local store', () => {
    const explicit = new MemoryStore();
    const mem = memFactory();
    expect(new StepRunner({ prefix: 's3://b/x', store: explicit, stores: [mem] }).store).toBe(explicit);
    expect(mem.calls).toEqual([]);
    const files: StoreFactory = { name: 'mine', schemes: ['file'], create: () => explicit };
    expect(new StepRunner({ prefix: dir, stores: [files] }).store).toBe(explicit);
  });

  it('stores and storeOptions are validated like executors: shapes, schemes, duplicates, unknown names', () => {
    const v = (o: unknown) => thrown(() => checkStepRunnerOptions(o));
    expect(checkStepRunnerOptions({ stores: [memFactory()], storeOptions: { mem: {}, local: { io: 'async' } } })).toBeDefined();
    expect(v({ stores: memFactory() }).message).toMatch(/^new StepRunner\(\): stores must be a list of store factories such as \[s3StoreFactory\(\)\], got an object/);
    expect(v({ stores: [{ name: 'x', schemes: ['x'] }] }).message).toMatch(/stores\[0\] \(store "x"\) has no create function/);
    expect(v({ stores: [{ name: '', schemes: ['x'], create: () => null }] }).message).toMatch(/stores\[0\]\.name must be a non-empty string/);
    expect(v({ stores: [{ name: 'x', schemes: [], create: () => null }] }).message).toMatch(/stores\[0\]\.schemes \(store "x"\) must list the URL schemes it serves/);
    expect(v({ stores: [{ name: 'x', schemes: ['S3://'], create: () => null }] }).message).toMatch(/holds "S3:\/\/" \(a string\); write each scheme lower-case without ":\/\/"/);
    const dup = v({ stores: [memFactory(), { ...memFactory(), name: 'other' }] });
    expect(dup.code).toBe('CAIRN_CONFIG');
    expect(dup.message).toMatch(/stores\[1\]\.schemes \(store "other"\) serves mem:\/\/, which store "mem" already serves/);
    const unknown = v({ stores: [memFactory()], storeOptions: { s3: {} } });
    expect(unknown.code).toBe('CAIRN_UNKNOWN_OPTION');
    expect(unknown.message).toMatch(/storeOptions: unknown option "s3"/);
    expect(v({ storeOptions: 3 }).message).toMatch(/storeOptions must be an object of options by store name/);
    expect(v({ storez: [] }).message).toMatch(/did you mean "stores"/);
  });
});
