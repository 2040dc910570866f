/** materializedConfig (issue 20): the exact config a step receives, paths resolved, nothing run or read. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { adopt, apply, hasCode, lower, materializedConfig, OUT, StepSpec } from '../src/index.js';
import { thrown } from './helpers/thrown.js';

describe('materializedConfig', () => {
  const calls: string[] = [];
  const raw = apply({ name: 'raw', version: '2026.12.01', inputs: { url: 'https://x/y.csv', out: OUT }, fn: () => void calls.push('raw') });
  const train = apply({
    name: 'train',
    version: '2026.12.01',
    inputs: { data: raw, lr: 0.1, nested: { data: raw, out: OUT } },
    runtime: { workers: 8 },
    fn: (_: { data: string; lr: number; nested: { data: string; out: string }; workers: number }) => void calls.push('train'),
  });

  it("gives an apply step's resolved inputs: dependencies as paths, OUT as its own, runtime included", () => {
    const prefix = '/nonexistent-store/x';
    const m = materializedConfig(train, { prefix });
    const spec = lower(train);
    const rawPath = lower(raw).outputPath(prefix);
    expect(m.outputPath).toBe(spec.outputPath(prefix));
    expect(m.nameWithHash).toBe(spec.nameWithHash);
    expect(m.config).toEqual({ data: rawPath, lr: 0.1, nested: { data: rawPath, out: m.outputPath }, workers: 8 });
    expect(m.runtime).toEqual({ workers: 8 });
    expect(m.deps).toEqual({ [lower(raw).nameWithHash]: rawPath });
    expect(calls).toEqual([]);
    expect(existsSync(prefix)).toBe(false);
  });

  it("follows the layout and takes URLs; a StepSpec's config is its hashAttrs", () => {
    const m = materializedConfig(train, { prefix: 's3://bucket/p', layout: 'versioned' });
    expect(m.outputPath).toBe('s3://bucket/p/train/2026.12.01');
    expect((m.config as { data: string }).data).toBe('s3://bucket/p/raw/2026.12.01');
    const spec = new StepSpec({ name: 'plain', hashAttrs: { k: [1, 2] }, fn: () => undefined });
    const p = materializedConfig(spec, { prefix: '/s' });
    expect(p).toEqual({ name: 'plain', nameWithHash: spec.nameWithHash, outputPath: join('/s', spec.nameWithHash), config: { k: [1, 2] }, deps: {} });
  });

  it("an adopted dependency is its source, as the step receives it", () => {
    const corpus = adopt({ name: 'corpus', version: 'v1', source: '/data/corpus' });
    const user = apply({ name: 'user', version: 'v1', inputs: { corpus }, fn: (_: { corpus: string }) => undefined });
    const m = materializedConfig(user, { prefix: '/nonexistent-store/y' });
    expect(m.config).toEqual({ corpus: '/data/corpus' });
    expect(Object.values(m.deps)).toEqual(['/data/corpus']);
  });

  it('bad arguments are typed errors', () => {
    const e1 = thrown(() => materializedConfig({}, { prefix: '/s' }));
    expect(hasCode(e1, 'CAIRN_BAD_DEPENDENCY')).toBe(true);
    const e2 = thrown(() => materializedConfig(train, { prefix: '' }));
    expect(hasCode(e2, 'CAIRN_INVALID_PATH')).toBe(true);
    const e3 = thrown(() => materializedConfig(train, undefined as never));
    expect(hasCode(e3, 'CAIRN_CONFIG')).toBe(true);
  });
});
