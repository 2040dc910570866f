import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apply, lower, OUT, StepSpec, hasCode } from '@cairn/core';
import { MemoryStore, run, StepRunError, StepRunner, type StoredState } from '../src/index.js';
import { Graph, memoryLogger, tempDirs } from './helpers/graph.js';
// @ts-expect-error: a plain .mjs fixture without types
import { writeAnswer } from './fixtures/runner-steps.mjs';

const dir = tempDirs();

describe('run(...handles)', () => {
  it('lowers, runs and returns loaded artifacts in argument order', async () => {
    const prefix = dir();
    process.env.CAIRN_PREFIX = prefix;
    try {
      const a = apply({ name: 'a', version: 'v1', fn: () => 'A', inputs: {} });
      const b = apply({ name: 'b', version: 'v1', fn: (i: { a: string; out: string }) => `${i.a}|${i.out}`, inputs: { a, out: OUT } });
      const [rb, ra] = await run(b, a);
      // Content-addressed: {name}/{version}-{hash}.
      const [pa, pb] = [lower(a), lower(b)].map((s) => join(prefix, `${s.name}/v1-${s.hash}`));
      expect(ra.value).toBe('A');
      expect(ra.path).toBe(pa);
      expect(rb.value).toBe(`${pa}|${pb}`);
      const again = await run(a); // cached: the value comes from the record
      expect(again[0].value).toBe('A');
      const rec = JSON.parse(readFileSync(join(pb as string, '.artifact.json'), 'utf8'));
      expect(rec).toMatchObject({ name: 'b', version: 'v1', deps: ['a@v1'], depIdentities: [lower(a).nameWithHash], status: 'SUCCESS', config: { a: pa, out: pb } });
      expect(rec.attempts).toHaveLength(1);
    } finally {
      delete process.env.CAIRN_PREFIX;
    }
  });
});

describe('store edge cases', () => {
  it('an unwritable store is one CAIRN_STORE error before any step runs', async () => {
    const base = dir();
    writeFileSync(join(base, 'not-a-dir'), '');
    let ran = 0;
    const h = apply({ name: 'w', version: 'v1', fn: () => ++ran, inputs: {} });
    const err = await new StepRunner({ prefix: join(base, 'not-a-dir', 'store') }).run([h]).catch((e: unknown) => e);
    expect(hasCode(err, 'CAIRN_STORE')).toBe(true);
    expect(String((err as Error).message)).toMatch(/not-a-dir.*not writable.*Nothing was run/s);
    expect(ran).toBe(0);
  });

  it('a corrupt record of a lazy step is treated as not built', async () => {
    const prefix = dir();
    let n = 0;
    const h = apply({ name: 'lazy', version: 'v1', fn: () => ++n, inputs: {} });
    const logger = memoryLogger();
    const r = new StepRunner({ prefix, logger });
    await r.run([h]);
    writeFileSync(join(lower(h).outputPath(prefix), '.artifact.json'), '{"cairn":1,"na');
    await r.run([h]);
    expect(n).toBe(2);
    expect(logger.lines.some((l) => l.includes('record is not valid JSON'))).toBe(true);
  });

  it('fails a step whose pruned dependency vanished before it was consumed, asking for a rerun', async () => {
    const g = new Graph().step('a').step('b', ['a']).step('c', ['b']);
    class VanishingStore extends MemoryStore {
      reads = 0;
      override async readStates(paths: readonly string[], withRecord: readonly boolean[] | boolean): Promise<StoredState[]> {
        const out = await super.readStates(paths, withRecord);
        const b = g.get('b').outputPath('/p');
        if (paths.includes(b) && ++this.reads === 1) this.entries.delete(b);
        return out;
      }
    }
    const store = new VanishingStore();
    await new StepRunner({ prefix: '/p', store }).run(g.pick('b'));
    store.reads = 0;
    const err = (await new StepRunner({ prefix: '/p', store, logger: memoryLogger() }).run(g.pick('c')).catch((e: unknown) => e)) as StepRunError;
    expect(hasCode(err.failures[0]?.error, 'CAIRN_PRUNED_OUTPUT_MISSING')).toBe(true);
    expect((err.failures[0]?.error as Error).message).toContain('rerun');
    expect(g.calls).toEqual(['a', 'b']);
  });

  it('keeps a thrown non-Error value as the failure', async () => {
    const g = new Graph().step('odd', [], { run: () => { throw 'just a string'; } });
    const err = (await new StepRunner({ prefix: '/p', store: new MemoryStore(), logger: memoryLogger() }).run(g.pick('odd')).catch((e: unknown) => e)) as StepRunError;
    expect(err.failures[0]?.error).toBe('just a string');
    expect(err.cause).toBe('just a string');
  });
});

describe('inline executor', () => {
  it('writes ctx.log lines to the attempt log files and passes the step context', async () => {
    const prefix = dir();
    const up = new StepSpec({ name: 'up', fn: () => ({ n: 1 }) });
    const seen: Record<string, unknown> = {};
    const step = new StepSpec({
      name: 'logs',
      deps: [up],
      resources: { cpu: 1 },
      fn: (out, ctx) => {
        Object.assign(seen, { name: ctx.name, out: ctx.outputPath, depPaths: ctx.depPaths, depResults: ctx.depResults, attempt: ctx.attempt, resources: ctx.resources });
        ctx.log.info('hello');
        ctx.log.warn('careful');
      },
    });
    await new StepRunner({ prefix }).run([step]);
    const out = step.outputPath(prefix);
    // While it runs, a step writes into its attempt's own directory beside its output path.
    expect(seen.out).toMatch(new RegExp(`^${prefix}/\\.${step.nameWithHash}\\.cairn-attempt-.+-1$`));
    expect(existsSync(seen.out as string)).toBe(false); // renamed into place by the commit
    expect({ ...seen, out }).toEqual({ name: 'logs', out, depPaths: { [up.nameWithHash]: up.outputPath(prefix) }, depResults: { [up.nameWithHash]: { n: 1 } }, attempt: 1, resources: { cpu: 1 } });
    expect(readFileSync(join(out, '.cairn/logs/attempt-1.stdout'), 'utf8')).toMatch(/INFO hello\n$/);
    expect(readFileSync(join(out, '.cairn/logs/attempt-1.stderr'), 'utf8')).toMatch(/WARN careful\n$/);
  });
});

describe('built-in executors', () => {
  it('runs a defineStep function on the threads and process executors', async () => {
    const prefix = dir();
    const up = new StepSpec({ name: 'up', fn: () => undefined });
    const onThreads = new StepSpec({ name: 'viaThreads', fn: writeAnswer, deps: [up], executor: 'threads' });
    const onProcess = new StepSpec({ name: 'viaProcess', fn: writeAnswer, executor: 'process' });
    const r = new StepRunner({ prefix, logger: memoryLogger() });
    const [t, p] = await r.load([onThreads, onProcess]);
    expect(t?.value).toEqual({ answer: 42, attempt: 1 });
    expect(p?.value).toEqual({ answer: 42, attempt: 1 });
    expect(readFileSync(join(onThreads.outputPath(prefix), 'answer.txt'), 'utf8')).toBe('43');
    expect(existsSync(join(onProcess.outputPath(prefix), '.executor_status'))).toBe(true);
  });
});
