import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { adopt, apply, artifacts, lower, OUT, type StepContext } from '@cairn/core';
import { describe, expect, it } from 'vitest';
import { type ArtifactRecord, run, StepRunner } from '../src/index.js';
import { tempDirs } from './helpers/graph.js';
import { runError } from './helpers/thrown.js';

const dir = tempDirs();

/** Every entry under `root` with its type, mode, size, mtime and content hash: what "nothing written" is checked against. */
function listing(root: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    const at = rel === '' ? root : join(root, rel);
    const st = lstatSync(at);
    const hash = st.isFile() ? createHash('sha256').update(readFileSync(at)).digest('hex') : '-';
    out.push(`${rel || '.'} ${st.isDirectory() ? 'd' : 'f'} ${st.mode.toString(8)} ${st.size} ${st.mtimeMs} ${hash}`);
    if (st.isDirectory()) for (const name of readdirSync(at).sort()) walk(rel === '' ? name : `${rel}/${name}`);
  };
  walk('');
  return out;
}

/** A directory of existing data (a "public data set"). */
function dataset(): string {
  const root = join(dir(), 'fineweb');
  mkdirSync(join(root, 'shards'), { recursive: true });
  writeFileSync(join(root, 'README'), 'someone else made this\n');
  writeFileSync(join(root, 'shards', '0.jsonl'), '{"text":"a"}\n');
  writeFileSync(join(root, 'shards', '1.jsonl'), '{"text":"b"}\n');
  return root;
}


describe('adopt()', () => {
  it('registers a local directory: dependents get its path and its loaded kind, and nothing is written into it', async () => {
    const source = dataset();
    const before = listing(source);
    const prefix = dir();
    const corpus = adopt({ name: 'fineweb', version: '2024.07', source, config: { split: 'train' } });
    const seen: unknown[] = [];
    const count = apply({
      name: 'count',
      fn: async ({ corpus: path, out }: { corpus: string; out: string }, ctx: StepContext) => {
        const d = await ctx.resolved(corpus);
        seen.push(path, ctx.path(corpus), ctx.depPaths);
        writeFileSync(join(out, 'n'), String(d.files.length));
        return d.files;
      },
      version: 'v1',
      inputs: { corpus, out: OUT },
    });
    const [c, a] = await run(count, corpus, { prefix });
    expect(c.value).toEqual(['README', 'shards/0.jsonl', 'shards/1.jsonl']);
    expect(seen[0]).toBe(source);
    expect(seen[1]).toBe(source);
    expect(Object.values(seen[2] as object)).toEqual([source]);
    // run() of the adopted artifact itself: its source, loaded by its kind (a directory by default).
    expect(a.path).toBe(source);
    expect(a.value.files).toEqual(['README', 'shards/0.jsonl', 'shards/1.jsonl']);

    // Its record lives in the store under the prefix, at a path derived from its identity.
    const spec = lower(corpus);
    const home = spec.outputPath(prefix);
    expect(home.startsWith(`${prefix}/fineweb/2024.07-`)).toBe(true);
    const rec = JSON.parse(readFileSync(join(home, '.artifact.json'), 'utf8')) as ArtifactRecord;
    expect(rec).toMatchObject({ name: 'fineweb', version: '2024.07', status: 'SUCCESS', source, artifact: 'dir', config: { source, config: { split: 'train' } } });
    const dependent = JSON.parse(readFileSync(join(lower(count).outputPath(prefix), '.artifact.json'), 'utf8')) as ArtifactRecord;
    expect(dependent.depPaths).toEqual([source]);
    expect(dependent.config).toMatchObject({ corpus: source });

    // A second run serves everything from the store; still nothing written into the source.
    await run(count, { prefix });
    expect(listing(source)).toEqual(before);
    expect(existsSync(join(source, '.executor_status'))).toBe(false);
  });

  it('a missing source fails the run with CAIRN_ADOPT_MISSING before any dependent starts, and creates nothing', async () => {
    const prefix = dir();
    const source = join(dir(), 'not-there');
    const corpus = adopt({ name: 'ckpt', version: 'v1', source });
    let started = 0;
    const finetune = apply({
      name: 'finetune',
      fn: () => {
        started++;
        return 1;
      },
      version: 'v1',
      inputs: { corpus },
    });
    const err = await runError(run(finetune, { prefix }));
    expect(started).toBe(0);
    const byStep = new Map(err.failures.map((f) => [f.step, f.error as Error & { code: string }]));
    const missing = byStep.get('ckpt');
    expect(missing).toMatchObject({ code: 'CAIRN_ADOPT_MISSING', step: 'ckpt' });
    expect(missing?.message).toContain(source);
    expect(missing?.message).toContain('"ckpt@v1"');
    expect(missing?.message).toContain('Put the data there');
    expect([...byStep.keys()]).toEqual(['ckpt']);
    expect(existsSync(source)).toBe(false);
    // The adopted step recorded nothing, not even FAILED: once the data is there, the next run goes ahead.
    expect(existsSync(lower(corpus).outputPath(prefix))).toBe(false);
    mkdirSync(source);
    writeFileSync(join(source, 'weights'), 'w');
    const [f] = await run(finetune, { prefix });
    expect(f.value).toBe(1);
    expect(started).toBe(1);
  });

  it('a source that vanished after it was adopted fails a dependent that needs it before it starts', async () => {
    const prefix = dir();
    const source = dataset();
    const corpus = adopt({ name: 'data', version: 'v1', source });
    await run(corpus, { prefix });
    rmSync(source, { recursive: true });
    let started = 0;
    const user = apply({
      name: 'user',
      fn: () => {
        started++;
      },
      version: 'v1',
      inputs: { corpus },
    });
    const err = await runError(run(user, { prefix }));
    expect(started).toBe(0);
    expect(err.failures[0]?.error).toMatchObject({ code: 'CAIRN_ADOPT_MISSING', step: 'user' });
    expect(String((err.failures[0]?.error as Error).message)).toContain('Step "user" depends on it and was not started');
  });

  it('identity includes the source and the config, not the kind', () => {
    const a = lower(adopt({ name: 'd', version: 'v1', source: '/data/a' }));
    const b = lower(adopt({ name: 'd', version: 'v1', source: '/data/b' }));
    const a2 = lower(adopt({ name: 'd', version: 'v1', source: '/data/a/' }));
    const c = lower(adopt({ name: 'd', version: 'v1', source: '/data/a', config: { rev: 2 } }));
    const k = lower(adopt({ name: 'd', version: 'v1', source: '/data/a', kind: artifacts.json() }));
    expect(new Set([a.nameWithHash, b.nameWithHash, c.nameWithHash]).size).toBe(3);
    expect(a2.nameWithHash).toBe(a.nameWithHash);
    expect(k.nameWithHash).toBe(a.nameWithHash);
    // Dependents change with it.
    const dep = (src: string) => lower(apply({ name: 'u', fn: () => 1, version: 'v1', inputs: { d: adopt({ name: 'd', version: 'v1', source: src }) } })).nameWithHash;
    expect(dep('/data/a')).not.toBe(dep('/data/b'));
  });

  it('a relative source or an unknown option is refused with the fix', () => {
    expect(() => adopt({ name: 'd', version: 'v1', source: 'data/a' })).toThrow(expect.objectContaining({ code: 'CAIRN_INVALID_PATH', step: 'd', message: expect.stringContaining('path.resolve') as unknown }));
    expect(() => adopt({ name: 'd', version: 'v1', source: '/a', sorce: 1 } as never)).toThrow(expect.objectContaining({ code: 'CAIRN_UNKNOWN_OPTION' }));
  });

  it('a URL source on a store the run cannot look into fails with CAIRN_STORE saying which sources work, not as missing', async () => {
    const prefix = dir();
    const remote = adopt({ name: 'remote', version: 'v1', source: 's3://bucket/datasets/x' });
    const user = apply({ name: 'user', fn: () => 1, version: 'v1', inputs: { remote } });
    const err = await runError(run(user, { prefix }));
    expect(err.failures[0]?.error).toMatchObject({ code: 'CAIRN_STORE', step: 'remote' });
    expect(String((err.failures[0]?.error as Error).message)).toContain('adopt a URL on the store of the run\'s prefix (same scheme), or a local path');
  });

  it('an adopted file with a json kind loads typed; runner.resolve gives its source as the path', async () => {
    const prefix = dir();
    const root = join(dir(), 'vocab');
    mkdirSync(root);
    writeFileSync(join(root, 'data.json'), '["a","b"]');
    const vocab = adopt({ name: 'vocab', version: 'v1', source: root, kind: artifacts.json<string[]>() });
    const loaded = await new StepRunner({ prefix }).resolve(vocab);
    expect(loaded).toEqual({ path: root, value: ['a', 'b'] });
    expect(statSync(join(root, 'data.json')).size).toBe(9);
    expect(readdirSync(root)).toEqual(['data.json']);
  });
});
