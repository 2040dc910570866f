import { describe, expect, it } from 'vitest';
import { apply, checkExecutorName, checkKnownKeys, describeValue, lower, nearestName, OUT, remote, StepSpec } from '../src/index.js';
import { thrown } from './helpers/thrown.js';

const fn = () => 1;

describe('checkKnownKeys / nearestName', () => {
  const known = new Set(['retries', 'timeoutMs', 'resources', 'executor', 'maxConcurrent']);
  const table: [string, string | undefined][] = [
    ['retires', 'retries'],
    ['retry', 'retries'],
    ['timeout', 'timeoutMs'],
    ['TimeoutMs', 'timeoutMs'],
    ['resource', 'resources'],
    ['exector', 'executor'],
    ['maxConcurrency', 'maxConcurrent'],
    ['runtime', undefined],
    ['x', undefined],
    ['recources', 'resources'],
    ['ret', undefined],
    ['exec', 'executor'],
  ];
  for (const [word, near] of table) it(`${word} → ${String(near)}`, () => expect(nearestName(word, known)).toBe(near));

  it('names the key, where, the nearest known one and all known ones', () => {
    const err = thrown(() => checkKnownKeys({ retries: 1, retires: 3 }, known, 'apply() for step "t"', { step: 't' }));
    expect(err.code).toBe('CAIRN_UNKNOWN_OPTION');
    expect(err.step).toBe('t');
    expect(err.message).toBe('apply() for step "t": unknown option "retires"; did you mean "retries"? Known options: retries, timeoutMs, resources, executor, maxConcurrent.');
    expect(thrown(() => checkKnownKeys({ zzz: 1 }, ['a', 'b'], 'here')).message).toBe('here: unknown option "zzz"; remove it. Known options: a, b.');
    expect(() => checkKnownKeys({ retries: 1, executor: 'x' }, known, 'ok')).not.toThrow();
    expect(thrown(() => checkKnownKeys({ a: 1 }, ['b'], 'w', { code: 'CAIRN_CONFIG' })).code).toBe('CAIRN_CONFIG');
  });

  it('describeValue shows the type, so "4" and 4 read differently', () => {
    expect(describeValue('4')).toBe('"4" (a string)');
    expect(describeValue(4)).toBe('4 (a number)');
    expect(describeValue(null)).toBe('null');
    expect(describeValue([1, 2])).toBe('an array of 2');
    expect(describeValue(new Map())).toBe('an instance of Map');
  });
});

describe('unknown options of apply, StepSpec, remote and resources (issue 18: dropped without a word)', () => {
  it('apply({ env }) and apply({ retires: 3 })', () => {
    const typo = thrown(() => apply({ name: 'a', version: 'v1', fn, inputs: {}, retires: 3 } as never));
    expect(typo.code).toBe('CAIRN_UNKNOWN_OPTION');
    expect(typo.step).toBe('a');
    expect(typo.message).toMatch(/^apply\(\) for step "a": unknown option "retires"; did you mean "retries"\?/);
    const env = thrown(() => apply({ name: 'a', version: 'v1', fn, inputs: {}, env: { gpu: true } } as never));
    expect(env.code).toBe('CAIRN_UNKNOWN_OPTION');
    expect(env.message).toMatch(/unknown option "env"; remove it\. Known options: name, fn, version, inputs, runtime, pin, layout, resources/);
  });

  it('an unknown key is refused even when its value is undefined', () => {
    expect(thrown(() => apply({ name: 'a', version: 'v1', fn, inputs: {}, timeout: undefined } as never)).message).toMatch(/"timeout"; did you mean "timeoutMs"/);
  });

  it('new StepSpec({ override })', () => {
    const err = thrown(() => new StepSpec({ name: 's', overrideOutputpath: 'x' } as never));
    expect(err.code).toBe('CAIRN_UNKNOWN_OPTION');
    expect(err.message).toMatch(/^new StepSpec\(\) for step "s": unknown option "overrideOutputpath"; did you mean "overrideOutputPath"\?/);
  });

  it('resources: unknown keys, fractional GPUs, bad types', () => {
    const gpu = thrown(() => new StepSpec({ name: 's', resources: { gpu: 1 } as never }));
    expect(gpu.code).toBe('CAIRN_UNKNOWN_OPTION');
    expect(gpu.message).toMatch(/^Step "s": resources: unknown option "gpu"; did you mean "gpus"\?/);
    expect(thrown(() => new StepSpec({ name: 's', resources: { gpus: { count: 1, kind: 'a100' } } as never })).message).toMatch(/resources\.gpus: unknown option "kind"/);
    expect(thrown(() => new StepSpec({ name: 's', resources: { gpus: 1.5 } })).message).toMatch(/gpus must be a non-negative integer, got 1\.5 \(a number\)/);
    expect(thrown(() => new StepSpec({ name: 's', resources: { cpu: '2' } as never })).message).toMatch(/cpu must be a non-negative number, got "2" \(a string\)/);
    expect(thrown(() => new StepSpec({ name: 's', resources: { hints: 'gpu' } as never })).code).toBe('CAIRN_INVALID_SPEC');
    expect(thrown(() => lower(apply({ name: 'a', version: 'v1', fn, inputs: {}, resources: { memGb: 2 } as never }))).message).toMatch(/"memGb"; did you mean "memoryGb"/);
    expect(new StepSpec({ name: 's', resources: { cpu: 0.5, gpus: { count: 2, type: 'a100' }, hints: { partition: 'gpu' } } }).resources?.cpu).toBe(0.5);
  });

  it('remote(fn, { resource })', () => {
    expect(thrown(() => remote(fn, { resource: { cpu: 1 } } as never)).message).toMatch(/^remote\(fn\): unknown option "resource"; did you mean "resources"\?/);
  });
});

describe('small typed fields', () => {
  it('executor names: a string of the documented form', () => {
    for (const bad of [3, '', 'has space', '-x', 'a/b', 'x'.repeat(65)]) {
      const err = thrown(() => apply({ name: 'e', version: 'v1', fn, inputs: {}, executor: bad } as never));
      expect(err.code).toBe('CAIRN_INVALID_SPEC');
      expect(err.message).toMatch(/^Step "e": executor: .* is not an executor name/);
      expect(thrown(() => new StepSpec({ name: 'e', executor: bad as never })).code).toBe('CAIRN_INVALID_SPEC');
    }
    for (const ok of ['inline', 'ssh', 'gpu-ssh.2', 'my_exec']) expect(checkExecutorName(ok, 'x', 'CAIRN_CONFIG')).toBe(ok);
  });

  it('timeoutMs above what a Node timer holds (it would fire at once) is refused', () => {
    const err = thrown(() => lower(apply({ name: 't', version: 'v1', fn, inputs: { out: OUT }, timeoutMs: 3e9 })));
    expect(err.code).toBe('CAIRN_INVALID_SPEC');
    expect(err.message).toMatch(/timeoutMs must be a positive number of milliseconds up to 2147483647/);
    expect(thrown(() => new StepSpec({ name: 't', timeoutMs: Infinity })).code).toBe('CAIRN_INVALID_SPEC');
    expect(thrown(() => new StepSpec({ name: 't', retries: '2' as never })).message).toMatch(/retries must be a non-negative integer, got "2" \(a string\)/);
  });

  it('StepSpec fields with the wrong type are CAIRN_INVALID_SPEC, not a TypeError', () => {
    const cases: Record<string, unknown>[] = [{ version: 5 }, { version: 'a/b' }, { hashAttrs: 5 }, { hashAttrs: [1] }, { writesRecord: 'yes' }, { kind: 'shell' }, { ref: { module: 1 } }, { fingerprint: 7 }, { provenance: 'now' }];
    for (const extra of cases) {
      const err = thrown(() => new StepSpec({ name: 's', ...extra } as never));
      expect(err.code === 'CAIRN_INVALID_SPEC' || err.code === 'CAIRN_INVALID_NAME', JSON.stringify(extra)).toBe(true);
      expect(err.step).toBe('s');
    }
  });

  it('an explicit null is refused, not read as "not given" (found by the fuzz suite)', () => {
    for (const extra of [{ executor: null }, { resources: null }, { retries: null }, { timeoutMs: null }, { pin: null }]) {
      expect(thrown(() => lower(apply({ name: 'n', version: 'v1', fn, inputs: {}, ...extra } as never))).code, JSON.stringify(extra)).toMatch(/^CAIRN_(INVALID_SPEC|INVALID_PATH)$/);
    }
    for (const extra of [{ executor: null }, { resources: null }, { retries: null }, { deps: null }]) {
      expect(thrown(() => new StepSpec({ name: 'n', ...extra } as never)).code, JSON.stringify(extra)).toMatch(/^CAIRN_(INVALID_SPEC|BAD_DEPENDENCY)$/);
    }
  });

  it('apply(options) that is not an object, and expectedFingerprint that is not a string', () => {
    expect(thrown(() => apply(undefined as never)).code).toBe('CAIRN_INVALID_SPEC');
    expect(thrown(() => apply({ name: 'a', version: 'v1', fn, inputs: {}, expectedFingerprint: 12 } as never)).code).toBe('CAIRN_INVALID_SPEC');
  });
});
