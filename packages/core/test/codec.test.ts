import { describe, expect, it } from 'vitest';
import { apply, artifacts, collectSpecs, lower, decodeSpecs, encodeSpecs, OUT, StepSpec, decodeTask, encodeTask, makeTask, defineStep, DepSlot } from '../src/index.js';

const step = defineStep(import.meta.url, 'step', (_: { prev?: string; cfg: unknown; out: string }) => 0);

describe('msgpack codec', () => {
  it('round-trips a graph keeping identity, shared dependencies and rich values', () => {
    const base = apply({ name: 'base', fn: step, version: 'v1', inputs: { cfg: { m: new Map([[1, 'a']]), s: new Set([1]), d: new Date(5), b: 7n, u: new Uint8Array([1]) }, out: OUT } });
    const left = apply({ name: 'left', fn: step, version: 'v1', inputs: { prev: base, cfg: 1, out: OUT }, resources: { gpus: { count: 1, type: 'a100' } } });
    const right = apply({ name: 'right', fn: step, version: 'v1', inputs: { prev: base, cfg: 2, out: OUT } });
    const specs = lower([left, right]);
    const bytes = encodeSpecs(specs);
    const back = decodeSpecs(bytes);
    expect(back.map((s) => s.nameWithHash)).toEqual(specs.map((s) => s.nameWithHash));
    expect(back[0]?.deps[0]).toBe(back[1]?.deps[0]);
    const b0 = back[0]?.deps[0] as StepSpec;
    expect(b0.inputs).toEqual({ cfg: { m: new Map([[1, 'a']]), s: new Set([1]), d: new Date(5), b: 7n, u: new Uint8Array([1]) }, out: OUT });
    expect(back[0]?.inputs).toEqual({ prev: new DepSlot(0), cfg: 1, out: OUT });
    expect(back[0]?.resources).toEqual({ gpus: { count: 1, type: 'a100' } });
    expect(back[0]?.ref).toEqual({ module: import.meta.url, export: 'step' });
    expect(back[0]?.fn).toBeUndefined();
  });

  it('encodes a dependency shared by identity once, even when lowered twice', () => {
    const base = apply({ name: 'base', fn: step, version: 'v1', inputs: { cfg: 0, out: OUT } });
    const l = apply({ name: 'l', fn: step, version: 'v1', inputs: { prev: base, cfg: 1, out: OUT } }).lower();
    const r = apply({ name: 'r', fn: step, version: 'v1', inputs: { prev: base, cfg: 2, out: OUT } }).lower();
    expect(l.deps[0]).not.toBe(r.deps[0]);
    const back = decodeSpecs(encodeSpecs([l, r]));
    expect(back[0]?.deps[0]).toBe(back[1]?.deps[0]);
  });

  it('round-trips a 100k-step graph', () => {
    const specs: StepSpec[] = [];
    for (let i = 0; i < 100_000; i++) {
      const deps = i < 3 ? [] : [specs[i - 1] as StepSpec, specs[i - 3] as StepSpec];
      specs.push(new StepSpec({ name: `s${i}`, hashAttrs: { i, tag: 'x' }, deps }));
    }
    const last = specs[specs.length - 1] as StepSpec;
    const bytes = encodeSpecs([last]);
    const [back] = decodeSpecs(bytes);
    expect(back?.nameWithHash).toBe(last.nameWithHash);
    expect(collectSpecs([back as StepSpec])).toHaveLength(100_000);
  }, 60_000);

  it('refuses truncated, corrupted and foreign bytes with a typed error', () => {
    const a = new StepSpec({ name: 'a', hashAttrs: { x: 1 } });
    const bytes = encodeSpecs([new StepSpec({ name: 'b', deps: [a] })]);
    const bad: Uint8Array[] = [
      bytes.subarray(0, bytes.length - 1),
      bytes.subarray(0, 3),
      new Uint8Array(0),
      Uint8Array.from(bytes, (v, i) => (i === 20 ? v ^ 0xff : v)),
      Uint8Array.from(bytes, (v, i) => (i === 5 ? 9 : v)),
      new TextEncoder().encode('{"json":true}'),
    ];
    for (const b of bad) expect(() => decodeSpecs(b)).toThrow(expect.objectContaining({ code: 'CAIRN_CODEC_CORRUPT' }));
  });

  it('encodes tasks for workers and refuses inline closures', () => {
    const h = apply({ name: 't', fn: step, version: 'v1', inputs: { cfg: 1, out: OUT } }).lower();
    const task = makeTask(h, { outputPath: '/o', depPaths: {}, attempt: 1 });
    expect(decodeTask(encodeTask(task))).toEqual(task);
    const inline = apply({ name: 'i', fn: (_: { n: number }) => 0, version: 'v1', inputs: { n: 1 } }).lower();
    expect(() => makeTask(inline, { outputPath: '/o', depPaths: {}, attempt: 1 })).toThrow(expect.objectContaining({ code: 'CAIRN_INLINE_FN_REMOTE' }));
    expect(() => decodeTask(new Uint8Array([0xc1]))).toThrow(expect.objectContaining({ code: 'CAIRN_CODEC_CORRUPT' }));
  });

  it('builds the same payload the runner sends: recorded results, store access, an open checkpoint directory, the inline placeholder', () => {
    const h = apply({ name: 't', fn: step, version: 'v1', inputs: { cfg: 1, out: OUT } }).lower();
    // The runner records a plain step's returned value, so the worker must check it is JSON.
    expect(makeTask(h, { outputPath: '/o', depPaths: {}, attempt: 1 }).recordsResult).toBe(true);
    const saved = apply({ name: 's', fn: step, version: 'v1', inputs: { cfg: 1, out: OUT }, artifact: artifacts.json() }).lower();
    expect(makeTask(saved, { outputPath: '/o', depPaths: {}, attempt: 1 })).not.toHaveProperty('recordsResult');
    const storeAccess = { module: '@cairn/store-s3', export: 'access', options: { bucket: 'b' }, path: 's3://b/t' };
    const full = makeTask(h, { outputPath: '/o', depPaths: {}, attempt: 2, checkpointDir: '/ck', storeAccess });
    expect(full).toMatchObject({ attempt: 2, checkpointDir: '/ck', storeAccess, depKeys: [] });
    const inline = apply({ name: 'i', fn: (_: { n: number }) => 0, version: 'v1', inputs: { n: 1 } }).lower();
    expect(makeTask(inline, { outputPath: '/o', depPaths: {}, attempt: 1, inlineChecked: true }).ref).toEqual({ module: 'inline:', export: 'i' });
  });
});
