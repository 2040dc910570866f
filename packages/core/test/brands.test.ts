import { describe, expect, it } from 'vitest';
import { apply, canonicalize, fingerprintPayload, isArtifactStep, isOut, isStepSpec, lower, OUT, StepSpec, type CairnError } from '../src/index.js';

const fn = () => 1;

describe('brands survive renamed classes and duplicate package copies', () => {
  // Bundlers rename classes (tsup emits `class _StepSpec`); a minifier renames them to one letter.
  class _StepSpec extends StepSpec {}
  const renamed = new _StepSpec({ name: 'renamed' });

  it('isStepSpec: by the registered symbol, not the class name', () => {
    expect(renamed.constructor.name).toBe('_StepSpec');
    expect(isStepSpec(renamed)).toBe(true);
    expect(isStepSpec(lower(apply({ name: 'l', version: 'v1', fn, inputs: {} })))).toBe(true);
    expect(isStepSpec({ name: 'x', nameWithHash: 'x-0' })).toBe(false);
    expect(isStepSpec(null)).toBe(false);
    // Another copy of @cairn/core brands its prototype with the same registered symbol.
    const foreign = Object.create({ [Symbol.for('cairn.StepSpec')]: true }) as object;
    expect(isStepSpec(foreign)).toBe(true);
  });

  it('a StepSpec in apply() inputs is CAIRN_BAD_DEPENDENCY even when its class is renamed', () => {
    // Issue 18: in the built package the name check never fired and the spec became JSON config.
    let err: CairnError | undefined;
    try {
      apply({ name: 'z', version: 'v1', fn, inputs: { nested: [{ x: renamed }] } });
    } catch (e) {
      err = e as CairnError;
    }
    expect(err?.code).toBe('CAIRN_BAD_DEPENDENCY');
    expect(err?.message).toBe('Step "z": inputs.nested[0].x is a lowered StepSpec; pass the ArtifactStep handle from apply() instead.');
  });

  it('a renamed StepSpec is accepted as a dependency and as a lower() root', () => {
    expect(new StepSpec({ name: 'c', deps: [renamed] }).deps[0]).toBe(renamed);
    expect(lower([renamed])[0]).toBe(renamed);
  });

  it('OUT: a plain object with __cairnOut is data, the sentinel is OUT', () => {
    expect(isOut(OUT)).toBe(true);
    expect(isOut({ __cairnOut: true })).toBe(false);
    expect(isOut(Object.create({ [Symbol.for('cairn.OUT')]: true }))).toBe(true);
    const h = apply({ name: 'o', version: 'v1', fn, inputs: { fake: { __cairnOut: true }, out: OUT } as never });
    expect(fingerprintPayload(h)).toBe(canonicalize({ fake: { __cairnOut: true }, out: '<OUT>' }));
  });

  it('isArtifactStep: a registered symbol on the handle prototype', () => {
    const h = apply({ name: 'h', version: 'v1', fn, inputs: {} });
    expect(isArtifactStep(h)).toBe(true);
    expect(isArtifactStep({ name: 'h', version: 'v1', deps: [] })).toBe(false);
    expect(isArtifactStep(Object.create({ [Symbol.for('cairn.handle')]: true }))).toBe(true);
  });
});
