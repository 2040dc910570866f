/**
 * Runtime arguments (issue 16): inputs that reach the step function but never its identity,
 * and the layout option that decides where an unpinned step lives.
 */
import { describe, expect, it } from 'vitest';
import { apply, lower, OUT } from '../src/index.js';
import { thrown } from './helpers/thrown.js';

interface TrainInputs {
  data: string;
  out: string;
  lr: number;
  numWorkers: number;
  logLevel: string;
}
const train = (i: TrainInputs) => `${i.data}|${i.out}|${i.lr}|${i.numWorkers}|${i.logLevel}`;
const data = apply({ name: 'data', version: 'v1', fn: () => 'd', inputs: { out: OUT } });

describe('runtime arguments', () => {
  it('reach the function merged with the inputs, and never change the fingerprint, the identity or the path', async () => {
    const a = apply({ name: 'train', version: 'v1', fn: train, inputs: { data, out: OUT, lr: 0.1 }, runtime: { numWorkers: 8, logLevel: 'info' } });
    const b = apply({ name: 'train', version: 'v1', fn: train, inputs: { data, out: OUT, lr: 0.1 }, runtime: { numWorkers: 64, logLevel: 'debug' } });
    // Lowered apart.
    const [sa, sb] = [a, b].map((h) => lower(apply({ name: 'top', version: 'v1', fn: (x: { t: string }) => x.t, inputs: { t: h } })).deps[0]);
    // Lowered together they would be one step (runtime arguments are not identity) with two sets of arguments.
    const twice = thrown(() => lower([a, b]));
    expect(twice.code).toBe('CAIRN_DUPLICATE_STEP');
    expect(twice.message).toBe('Step "train@v1" is given twice with different runtime arguments ({"logLevel":"info","numWorkers":8} and {"logLevel":"debug","numWorkers":64}); it is one step and runs once. Build it from one handle, or give both the same runtime arguments.');
    const again = apply({ name: 'train', version: 'v1', fn: train, inputs: { data, out: OUT, lr: 0.1 }, runtime: { logLevel: 'info', numWorkers: 8 } });
    const merged = lower([a, again]); // the same arguments: one step
    expect(merged[1]).toBe(merged[0]);
    expect(sa?.fingerprint).toBe(sb?.fingerprint);
    expect(sa?.fingerprintPayload).toBe('{"data":"<dep:data@v1>","lr":0.1,"out":"<OUT>"}');
    expect(sa?.nameWithHash).toBe(sb?.nameWithHash);
    expect(sa?.outputPath('/s')).toBe(sb?.outputPath('/s'));
    expect(sa?.runtime).toEqual({ numWorkers: 8, logLevel: 'info' });
    expect(Object.isFrozen(sa?.runtime)).toBe(true);
    const depKey = sa?.deps[0]?.nameWithHash as string;
    expect(await sa?.fn?.('/s/train', { depPaths: { [depKey]: '/s/data' } } as never)).toBe('/s/data|/s/train|0.1|8|info');
    expect(await sb?.fn?.('/s/train', { depPaths: { [depKey]: '/s/data' } } as never)).toBe('/s/data|/s/train|0.1|64|debug');
    // What travels to workers: the inputs template, runtime arguments included.
    expect(sb?.inputs).toMatchObject({ lr: 0.1, numWorkers: 64, logLevel: 'debug' });
  });

  it('are typed like inputs: the rest of the inputs must be given, and runtime keys must be inputs of the function', () => {
    apply({ name: 't', version: 'v1', fn: train, inputs: { data, out: OUT, lr: 0.1, logLevel: 'x' }, runtime: { numWorkers: 2 } });
    // @ts-expect-error lr is neither in inputs nor in runtime
    apply({ name: 't', version: 'v1', fn: train, inputs: { data, out: OUT, logLevel: 'x' }, runtime: { numWorkers: 2 } });
    // @ts-expect-error numWorkers must be a number
    apply({ name: 't', version: 'v1', fn: train, inputs: { data, out: OUT, lr: 0.1, logLevel: 'x' }, runtime: { numWorkers: '2' } });
    expect(true).toBe(true); // the checks above are the type checker's (npm run typecheck)
  });

  it('bad runtime arguments are typed errors naming the step and the fix', () => {
    const make = (runtime: unknown, inputs: unknown = { out: OUT, a: 1 }) => thrown(() => apply({ name: 'train', version: 'v1', fn: () => 1, inputs, runtime } as never));
    const both = make({ a: 2 });
    expect(both.code).toBe('CAIRN_INVALID_SPEC');
    expect(both.step).toBe('train');
    expect(both.message).toBe('Step "train": "a" is both in inputs and in runtime; keep it in inputs if it changes the result, in runtime if it does not.');
    expect(make({ nested: [1, { d: data }] }).message).toBe('Step "train": runtime.nested[1].d is a step handle; dependencies and the output path bear identity, so put them in inputs.');
    expect(make({ out2: OUT }).message).toMatch(/runtime\.out2 is OUT;/);
    expect(make(['x']).message).toMatch(/runtime must be a plain object of arguments such as \{ numWorkers: 8 \}, got an array of 1\./);
    expect(make({ n: 1 }, [OUT]).message).toMatch(/with runtime arguments, inputs must be a plain object too/);
    expect(make({ f: () => 1 }).code).toBe('CAIRN_CANONICAL_VALUE');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(make({ cyclic }).message).toMatch(/runtime\.cyclic\.self/);
    let deep: unknown = 1;
    for (let i = 0; i < 400; i++) deep = { deep };
    expect(make({ deep }).code).toBe('CAIRN_TOO_DEEP');
  });
});

describe('layout', () => {
  it('is checked where it is given', () => {
    const err = thrown(() => apply({ name: 's', version: 'v1', fn: () => 1, inputs: {}, layout: 'flat' } as never));
    expect(err.code).toBe('CAIRN_INVALID_SPEC');
    expect(err.message).toBe('Step "s": layout must be "content" ({name}/{version}-{hash}, the default) or "versioned" ({name}/{version}, Marin\'s fixed paths), got "flat" (a string).');
    expect(thrown(() => lower(data, { layout: 'x' } as never)).message).toMatch(/^lower\(\): options\.layout must be "content"/);
  });

  it('a pinned step keeps its pin in either layout; every step is fixed-path there', () => {
    const pinned = apply({ name: 'p', version: 'v1', fn: () => 1, inputs: {}, pin: 'shared/p' });
    for (const layout of ['content', 'versioned'] as const) {
      const s = lower(pinned, { layout });
      expect([s.overrideOutputPath, s.fixedPath]).toEqual(['shared/p', true]);
    }
  });
});
