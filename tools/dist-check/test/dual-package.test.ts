/**
 * An ESM and a CJS copy of @cairn/core in one process (a dual-package hazard every npm user can
 * hit): each must recognise the other's objects by brand, never by class identity or name.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);

describe('two copies of @cairn/core (ESM and CJS) in one process', () => {
  it('brands, errors and the codec work across the copies', async () => {
    const esm = await import('@cairn/core');
    const cjs = require('@cairn/core') as typeof esm;
    expect(esm.StepSpec).not.toBe(cjs.StepSpec); // really two copies
    const fn = () => 1;
    const fromCjs = cjs.lower(cjs.apply({ name: 'c', version: 'v1', fn, inputs: {} }));
    expect(esm.isStepSpec(fromCjs)).toBe(true);
    let err: unknown;
    try {
      esm.apply({ name: 'e', version: 'v1', fn, inputs: { x: fromCjs } });
    } catch (e) {
      err = e;
    }
    expect(esm.hasCode(err, 'CAIRN_BAD_DEPENDENCY')).toBe(true);
    expect(cjs.isCairnError(err)).toBe(true);
    // A handle and OUT of one copy are dependencies / OUT for the other.
    const handle = cjs.apply({ name: 'dep', version: 'v1', fn, inputs: { out: cjs.OUT } });
    const user = esm.apply({ name: 'user', version: 'v1', fn, inputs: { handle, out: cjs.OUT } });
    expect(user.deps).toEqual([handle]);
    expect(esm.fingerprintPayload(user)).toBe('{"handle":"<dep:dep@v1>","out":"<OUT>"}');
    // A spec of one copy is a dependency of the other's, and its bytes decode there.
    const plain = new esm.StepSpec({ name: 'p', deps: [new cjs.StepSpec({ name: 'q' })] });
    expect(cjs.decodeSpecs(esm.encodeSpecs([plain]))[0]?.nameWithHash).toBe(plain.nameWithHash);
  });
});
