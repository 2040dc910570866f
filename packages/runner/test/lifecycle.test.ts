// One lifecycle, sync or async: a store that answers at once + an executor with runSync finish a
// step's lease → run → commit → release → settle without a promise; a store or a step that
// answers with promises goes through the same lifecycle, with the same files, records and events.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { hasCode, StepSpec } from '@cairn/core';
import { currentClient, LocalStore, MemoryStore, type RunnerEvent, StepRunner } from '../src/index.js';
import { leaseFile } from '../src/store/local/layout.js';
import { AsyncMemoryStore } from './helpers/async-store.js';
import { chain, Graph, memoryLogger, tempDirs } from './helpers/graph.js';

const dir = tempDirs();

/** Record fields that differ between runs (time, run id). */
function stable(record: unknown): unknown {
  // Timings, the run id and the run's provenance (its capture time) differ from run to run.
  const { timings: _t, runId: _r, provenance: _p, attempts, ...rest } = record as { timings: unknown; runId: unknown; provenance: unknown; attempts: { start: number; end: number }[] };
  return { ...rest, attempts: attempts.map(({ start: _s, end: _e, ...a }) => a) };
}

function build(): StepSpec[] {
  const a = new StepSpec({ name: 'a', hashAttrs: { k: 1 }, fn: () => ({ n: 1, list: [1, 'x'] }) });
  const b = new StepSpec({ name: 'b', hashAttrs: { k: 2 }, deps: [a], fn: (_o, ctx) => Object.keys(ctx.depResults).length });
  const c = new StepSpec({ name: 'c', hashAttrs: { k: 3 }, deps: [a, b], fn: () => -0 });
  const d = new StepSpec({ name: 'd', hashAttrs: { k: 4 }, deps: [c], fn: () => 'text' });
  return [a, b, c, d];
}

describe('one step lifecycle, sync or async', () => {
  it('a store that answers with promises writes the same records and emits the same events', async () => {
    const outcome = async (store: MemoryStore) => {
      const events: string[] = [];
      const r = new StepRunner({ prefix: '/p', store, onEvent: (e: RunnerEvent) => e.type === 'step' && events.push(`${e.step}:${e.state}:${e.attempt ?? ''}`) });
      const specs = build();
      const summary = await r.run(specs);
      const records = specs.map((s) => stable(store.entries.get(s.outputPath('/p'))?.record));
      const statuses = specs.map((s) => store.entries.get(s.outputPath('/p'))?.status);
      const leases = specs.filter((s) => store.entries.get(s.outputPath('/p'))?.lease !== undefined).length;
      return { events, records, statuses, leases, counts: summary.counts, results: specs.map((s) => summary.outcome(s)?.result) };
    };
    const fast = await outcome(new MemoryStore());
    const general = await outcome(new AsyncMemoryStore());
    expect(fast).toEqual(general);
    expect(fast.statuses).toEqual(['SUCCESS', 'SUCCESS', 'SUCCESS', 'SUCCESS']);
    expect(fast.leases).toBe(0);
    expect(fast.results).toEqual([{ n: 1, list: [1, 'x'] }, 1, 0, 'text']);
    expect(Object.is(fast.results[2], 0)).toBe(true); // -0 recorded as JSON makes it: 0
  });

  it('runs a chain of 200,000 synchronous steps without growing the stack', async () => {
    const steps = chain(200_000);
    const summary = await new StepRunner({ prefix: '/p', store: new MemoryStore() }).run([steps.at(-1) as StepSpec], { handleSigint: false });
    expect(summary.counts.succeeded).toBe(200_000);
  }, 60_000);

  it('synchronous steps see the caller AsyncLocalStorage value and the client', async () => {
    const als = new AsyncLocalStorage<string>();
    const seen: unknown[] = [];
    const steps = chain(5, () => {
      seen.push([als.getStore(), typeof currentClient().submit]);
    });
    const r = new StepRunner({ prefix: '/p', store: new MemoryStore() });
    await als.run('caller', () => r.run([steps.at(-1) as StepSpec]));
    expect(seen).toEqual(Array.from({ length: 5 }, () => ['caller', 'function']));
  });

  it('a step that returns a promise, or fails and retries, goes on asynchronously in the same lifecycle', async () => {
    let tries = 0;
    const store = new MemoryStore();
    const s0 = new StepSpec({ name: 's0', fn: () => 0 });
    const s1 = new StepSpec({ name: 's1', deps: [s0], fn: async () => 'later' });
    const s2 = new StepSpec({
      name: 's2',
      deps: [s1],
      retries: 1,
      fn: (_o, ctx) => {
        if (++tries === 1) throw new Error('first try');
        return ctx.depResults[s1.nameWithHash];
      },
    });
    const logger = memoryLogger();
    const summary = await new StepRunner({ prefix: '/p', store, logger }).run([s2]);
    expect(summary.counts.succeeded).toBe(3);
    expect(summary.outcome(s2)?.result).toBe('later');
    const rec = store.entries.get(s2.outputPath('/p'))?.record;
    expect(rec?.attempts.map((a) => [a.attempt, a.state, a.jobId])).toEqual([
      [1, 'failed', `${s2.nameWithHash}.1`],
      [2, 'succeeded', `${s2.nameWithHash}.2`],
    ]);
    expect(store.entries.get(s1.outputPath('/p'))?.record?.result).toBe('later');
    expect(logger.lines.some((l) => l.includes('attempt 1 failed (first try)'))).toBe(true);
  });

  it('records CANCELLED when a synchronous step cancels the run', async () => {
    const ac = new AbortController();
    const store = new MemoryStore();
    const [s0, s1, s2] = chain(3, (out) => {
      if (out.includes('s1')) ac.abort();
    });
    const err = await new StepRunner({ prefix: '/p', store, logger: memoryLogger() }).run([s2 as StepSpec], { signal: ac.signal }).catch((e: unknown) => e);
    expect(hasCode(err, 'CAIRN_CANCELLED')).toBe(true);
    expect(store.entries.get((s0 as StepSpec).outputPath('/p'))?.status).toBe('SUCCESS');
    expect(store.entries.get((s1 as StepSpec).outputPath('/p'))?.status).toBe('CANCELLED');
    expect(store.entries.get((s2 as StepSpec).outputPath('/p'))?.status).toBeUndefined();
  });

  it('aborts ctx.signal whether a synchronous step reads it before or after the run is cancelled', async () => {
    for (const readFirst of [true, false]) {
      const ac = new AbortController();
      const seen: unknown[] = [];
      const [, , s2] = chain(3, (out, ctx) => {
        if (!out.includes('s1')) return;
        const early = readFirst ? ctx.signal : undefined;
        ac.abort(new Error('stop'));
        const signal = early ?? ctx.signal;
        seen.push(signal.aborted, (signal.reason as Error).message, signal === ctx.signal);
      });
      const store = new MemoryStore();
      const err = await new StepRunner({ prefix: '/p', store, logger: memoryLogger() }).run([s2 as StepSpec], { signal: ac.signal }).catch((e: unknown) => e);
      expect(hasCode(err, 'CAIRN_CANCELLED')).toBe(true);
      expect(seen).toEqual([true, 'stop', true]);
    }
  });

  it('writes a synchronous step’s log lines to its attempt files, and creates none for a silent step', async () => {
    const prefix = dir();
    const loud = new StepSpec({ name: 'loud', hashAttrs: {}, fn: (_o, ctx) => ctx.log.info('hello') });
    const quiet = new StepSpec({ name: 'quiet', hashAttrs: {}, deps: [loud], fn: () => undefined });
    await new StepRunner({ prefix, store: new LocalStore(), logger: memoryLogger() }).run([quiet]);
    expect(readFileSync(join(loud.outputPath(prefix), '.cairn/logs/attempt-1.stdout'), 'utf8')).toMatch(/INFO hello\n$/);
    expect(existsSync(join(quiet.outputPath(prefix), '.cairn'))).toBe(false);
  });

  it('re-checks the status under the lease when the step directory already existed', async () => {
    const prefix = dir();
    const g = new Graph().step('a').step('b', ['a']).step('c', ['b']);
    const bPath = g.get('b').outputPath(prefix);
    // Another runner finishes b while this one runs a.
    g.on('a', () => {
      mkdirSync(bPath, { recursive: true });
      writeFileSync(join(bPath, '.artifact.json'), JSON.stringify({ cairn: 1, name: 'b', nameWithHash: g.get('b').nameWithHash, outputPath: bPath, result: 'elsewhere' }));
      writeFileSync(join(bPath, '.executor_status'), 'SUCCESS');
    });
    const summary = await new StepRunner({ prefix, logger: memoryLogger() }).run([g.get('c')]);
    expect(g.calls).toEqual(['a', 'c']);
    expect(summary.outcome(g.get('b'))?.state).toBe('skipped');
    expect(existsSync(leaseFile(bPath))).toBe(false);
    expect(readFileSync(join(g.get('c').outputPath(prefix), '.executor_status'), 'utf8')).toBe('SUCCESS');
  });

  it('two runs of the same spec objects at once each find their own steps (and let go of them after)', async () => {
    // A run finds a spec's node through a tag on the spec; runs sharing specs take each other's
    // tags and must fall back to the output path.
    const specs: StepSpec[] = [];
    let calls = 0;
    for (let i = 0; i < 300; i++) {
      const deps = i === 0 ? [] : [specs[i - 1] as StepSpec, specs[Math.floor(i / 2)] as StepSpec];
      specs.push(new StepSpec({ name: `s${i}`, hashAttrs: { i }, deps: [...new Set(deps)], fn: async () => (await Promise.resolve(), ++calls) }));
    }
    const twin = new StepSpec({ name: 's5', hashAttrs: { i: 5 }, deps: specs[5]?.deps, fn: () => 'never' }); // same path as s5
    const runs = ['/one', '/two'].map((prefix) => new StepRunner({ prefix, store: new MemoryStore(), logger: memoryLogger(), maxConcurrent: 3 }).run([...specs, twin]));
    const [one, two] = await Promise.all(runs);
    expect(calls).toBe(600);
    for (const summary of [one, two]) {
      expect(summary?.counts.succeeded).toBe(300);
      for (const s of specs) expect(summary?.outcome(s)?.state).toBe('succeeded');
      expect(summary?.outcome(twin)).toStrictEqual(summary?.outcome(specs[5] as StepSpec)); // one step: same path, same state
    }
    expect(one?.outcome(specs[299] as StepSpec)?.path).toBe((specs[299] as StepSpec).outputPath('/one'));
    expect(two?.outcome(specs[299] as StepSpec)?.path).toBe((specs[299] as StepSpec).outputPath('/two'));
  });
});
