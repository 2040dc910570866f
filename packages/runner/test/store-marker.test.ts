/**
 * The store marker (`{prefix}/.cairn/store.json`): every run that writes marks its store, through
 * the optional `markStore`/`readMarker` of the store contract, so `cairn clean` can refuse a
 * directory that is not a store (issue 28: `clean --prefix ""` removed a user's directory).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { StepSpec } from '@cairn/core';
import { LocalStore, MemoryStore, parseStoreMarker, StepRunner, STORE_MARKER_FILE } from '../src/index.js';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe('store marker', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-marker-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a run that writes marks the local store once; a run with nothing to write does not', async () => {
    const prefix = join(dir, 'local');
    const runner = new StepRunner({ prefix, logger: quiet });
    const step = new StepSpec({ name: 'a', fn: () => 1 });
    await runner.run([step]);
    const file = join(prefix, STORE_MARKER_FILE);
    const text = readFileSync(file, 'utf8');
    expect(parseStoreMarker(text)).toMatchObject({ format: 'cairn-store', version: 1 });
    expect(await new LocalStore().readMarker(prefix)).toMatchObject({ format: 'cairn-store', version: 1 });
    // The next run does not rewrite it.
    await new StepRunner({ prefix, logger: quiet }).run([new StepSpec({ name: 'b', fn: () => 2 })]);
    expect(readFileSync(file, 'utf8')).toBe(text);
    // Everything cached: nothing is written, not even the marker.
    rmSync(file);
    await new StepRunner({ prefix, logger: quiet }).run([step]);
    expect(existsSync(file)).toBe(false);
  });

  it('a file of that name Cairn did not write is not a marker', async () => {
    const prefix = join(dir, 'foreign');
    mkdirSync(join(prefix, '.cairn'), { recursive: true });
    writeFileSync(join(prefix, STORE_MARKER_FILE), '{"hello": 1}');
    expect(await new LocalStore().readMarker(prefix)).toBeNull();
    expect(parseStoreMarker('not json')).toBeNull();
  });

  it('the memory store keeps its marker per prefix', async () => {
    const store = new MemoryStore();
    expect(store.readMarker('/m')).toBeNull();
    await new StepRunner({ prefix: '/m', store, logger: quiet }).run([new StepSpec({ name: 'a', fn: () => 1 })]);
    expect(store.readMarker('/m')).toMatchObject({ format: 'cairn-store', version: 1 });
    expect(store.readMarker('/other')).toBeNull();
  });
});
