import { existsSync, readFileSync, statSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { apply, CairnError, lower, StepSpec, hasCode } from '@cairn/core';
import { currentClient, MemoryStore, StepRunError, StepRunner, type RunnerEvent } from '../src/index.js';
import { chain, Graph, memoryLogger, tempDirs } from './helpers/graph.js';
import { scriptedExecutor } from './helpers/scripted-executor.js';
import { mulberry32 } from '../../../tools/testenv/rng.mjs';

const dir = tempDirs();
const status = (path: string) => readFileSync(join(path, '.executor_status'), 'utf8');

describe('caching and pruning', () => {
  it('a second run executes nothing and rewrites nothing', async () => {
    const prefix = dir();
    const g = new Graph().step('a').step('b', ['a']).step('c', ['b']);
    const r = new StepRunner({ prefix });
    await r.run(g.pick('c'));
    expect(g.calls).toEqual(['a', 'b', 'c']);
    const files = ['a', 'b', 'c'].flatMap((n) => ['.executor_status', '.artifact.json'].map((f) => join(g.get(n).outputPath(prefix), f)));
    const before = files.map((f) => statSync(f).mtimeMs);
    const summary = await r.run(g.pick('a', 'b', 'c'));
    expect(g.calls).toEqual(['a', 'b', 'c']);
    expect(files.map((f) => statSync(f).mtimeMs)).toEqual(before);
    expect(summary.counts).toEqual({ cached: 3 });
    expect(files.some((f) => existsSync(`${f}.lock`))).toBe(false);
  });

  it('only the built terminal is examined: nothing runs', async () => {
    const store = new MemoryStore();
    const g = new Graph().step('a').step('b', ['a']).step('c', ['b']);
    const r = new StepRunner({ prefix: '/p', store });
    await r.run(g.pick('c'));
    store.entries.delete(g.get('a').outputPath('/p')); // even a missing upstream output is not looked at
    const summary = await r.run(g.pick('c'));
    expect(g.calls).toEqual(['a', 'b', 'c']);
    expect(summary.counts).toEqual({ cached: 1 });
  });

  it('a diamond with one branch cached runs exactly the rest', async () => {
    const store = new MemoryStore();
    const g = new Graph().step('a').step('b', ['a']).step('c', ['a']).step('d', ['b', 'c']);
    const r = new StepRunner({ prefix: '/p', store });
    await r.run(g.pick('b'));
    expect(g.calls).toEqual(['a', 'b']);
    await r.run(g.pick('d'));
    expect(g.calls).toEqual(['a', 'b', 'c', 'd']);
  });

  it('two terminals sharing a dependency run it once', async () => {
    const store = new MemoryStore();
    const g = new Graph().step('shared').step('x', ['shared']).step('y', ['shared']);
    await new StepRunner({ prefix: '/p', store }).run(g.pick('x', 'y'));
    expect(g.count('shared')).toBe(1);
    expect(g.calls.length).toBe(3);
  });

  it('steps given in reverse order run in dependency order', async () => {
    const store = new MemoryStore();
    const g = new Graph().step('a').step('b', ['a']).step('c', ['b']).step('d', ['c']);
    await new StepRunner({ prefix: '/p', store }).run(g.pick('d', 'c', 'b', 'a').reverse().reverse());
    expect(g.calls).toEqual(['a', 'b', 'c', 'd']);
    const g2 = new Graph().step('a').step('b', ['a']).step('c', ['b']);
    await new StepRunner({ prefix: '/q', store }).run([g2.get('a'), g2.get('b'), g2.get('c')].reverse());
    expect(g2.calls).toEqual(['a', 'b', 'c']);
  });

  it('a random DAG pulled from a shuffled generator: every step once, after all its dependencies', async () => {
    const random = mulberry32(7);
    const n = 3000;
    const done: boolean[] = [];
    const order: number[] = [];
    const specs: StepSpec[] = [];
    const failing = 1234;
    for (let i = 0; i < n; i++) {
      const deps = i < 20 ? [] : [...new Set(Array.from({ length: 1 + Math.floor(random() * 4) }, () => Math.floor(random() * i)))];
      const fn = () => {
        for (const d of deps) if (!done[d]) throw new Error(`step ${i} ran before its dependency ${d}`);
        if (i === failing) throw new Error('planned failure');
        order.push(i);
        // Every seventh step finishes later, so edges are freed and reused while others wait.
        return i % 7 === 0 ? new Promise<void>((resolve) => setImmediate(() => ((done[i] = true), resolve()))) : void (done[i] = true);
      };
      specs.push(new StepSpec({ name: `s${i}`, hashAttrs: { i }, deps: deps.map((d) => specs[d] as StepSpec), fn }));
    }
    // The dependents of the failing step, transitively.
    const doomed = new Set([failing]);
    for (let i = failing + 1; i < n; i++) if ((specs[i] as StepSpec).deps.some((d) => doomed.has(specs.indexOf(d)))) doomed.add(i);
    const shuffled = [...specs.keys()].sort(() => random() - 0.5);
    function* pull() {
      for (const i of shuffled) yield specs[i] as StepSpec;
    }
    const err = await new StepRunner({ prefix: '/p', store: new MemoryStore(), logger: memoryLogger(), maxConcurrent: 5 }).run(pull()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StepRunError);
    expect(new Set(order).size).toBe(order.length);
    expect(order.length).toBe(n - doomed.size);
    expect((err as StepRunError).failures.map((f) => f.step)).toEqual([`s${failing}`]);
    expect(doomed.size).toBeGreaterThan(10);
    for (let i = 0; i < n; i++) expect(done[i] === true).toBe(!doomed.has(i));
  });

  it('a 10,000-step chain completes', async () => {
    const specs = chain(10_000);
    const summary = await new StepRunner({ prefix: '/p', store: new MemoryStore() }).run([specs[specs.length - 1] as StepSpec]);
    expect(summary.counts.succeeded).toBe(10_000);
  });

  it('a corrupt status or record is treated as not built, with a warning', async () => {
    const prefix = dir();
    const logger = memoryLogger();
    const g = new Graph().step('a').step('b');
    const r = new StepRunner({ prefix, logger });
    await r.run(g.pick('a', 'b'));
    writeFileSync(join(g.get('a').outputPath(prefix), '.executor_status'), 'SUCC');
    writeFileSync(join(g.get('b').outputPath(prefix), '.executor_status'), '');
    await r.run(g.pick('a', 'b'));
    expect(g.calls).toEqual(['a', 'b', 'a', 'b']);
    expect(logger.lines.filter((l) => l.includes('treating it as not built'))).toHaveLength(2);
    expect(status(g.get('a').outputPath(prefix))).toBe('SUCCESS');
  });
});

describe('failures', () => {
  it('aggregates every failure with the original error as cause; dependents get DEP_FAILED on disk', async () => {
    const prefix = dir();
    const boom = new Error('boom');
    const bang = new TypeError('bang');
    const g = new Graph()
      .step('bad1', [], { run: () => { throw boom; } })
      .step('bad2', [], { run: async () => { throw bang; } })
      .step('child', ['bad1'])
      .step('grandchild', ['child'])
      .step('fine');
    const err = await new StepRunner({ prefix, logger: memoryLogger() }).run(g.pick('grandchild', 'bad2', 'fine')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StepRunError);
    const e = err as StepRunError;
    expect(e.code).toBe('CAIRN_STEP_FAILED');
    expect(e.failures.map((f) => f.step).sort()).toEqual(['bad1', 'bad2']);
    expect(e.failures.find((f) => f.step === 'bad1')?.error).toBe(boom);
    expect(e.cause).toBe(e.failures[0]?.error);
    expect(g.calls.sort()).toEqual(['bad1', 'bad2', 'fine']);
    expect(status(g.get('bad1').outputPath(prefix))).toBe('FAILED');
    expect(status(g.get('child').outputPath(prefix))).toBe('DEP_FAILED');
    expect(status(g.get('grandchild').outputPath(prefix))).toBe('DEP_FAILED');
    expect(status(g.get('fine').outputPath(prefix))).toBe('SUCCESS');
    const rec = JSON.parse(readFileSync(join(g.get('bad1').outputPath(prefix), '.artifact.json'), 'utf8'));
    expect(rec.attempts[0].error.message).toBe('boom');
  });

  it('forceRunFailed: false counts an earlier failure as one failure without aborting the run', async () => {
    const store = new MemoryStore();
    let fail = true;
    const g = new Graph().step('flaky', [], { run: () => { if (fail) throw new Error('first'); } }).step('other');
    const r = new StepRunner({ prefix: '/p', store, logger: memoryLogger() });
    await expect(r.run(g.pick('flaky'))).rejects.toBeInstanceOf(StepRunError);
    fail = false;
    const err = (await r.run(g.pick('flaky', 'other'), { forceRunFailed: false }).catch((e: unknown) => e)) as StepRunError;
    expect(err.failures).toHaveLength(1);
    expect(hasCode(err.failures[0]?.error, 'CAIRN_PREVIOUS_FAILURE')).toBe(true);
    expect(g.calls).toEqual(['flaky', 'other']);
    await r.run(g.pick('flaky'));
    expect(g.calls).toEqual(['flaky', 'other', 'flaky']);
  });

  it('retries a failing step and records every attempt', async () => {
    const prefix = dir();
    let n = 0;
    const g = new Graph().step('r', [], { retries: 2, run: () => { if (++n < 3) throw new Error(`try ${n}`); return n; } });
    const [out] = await new StepRunner({ prefix, logger: memoryLogger() }).load(g.pick('r'));
    expect(out?.value).toBe(3);
    const rec = JSON.parse(readFileSync(join(g.get('r').outputPath(prefix), '.artifact.json'), 'utf8'));
    expect(rec.attempts.map((a: { state: string }) => a.state)).toEqual(['failed', 'failed', 'succeeded']);
  });

  it('times out a step with CAIRN_TIMEOUT', async () => {
    const store = new MemoryStore();
    const g = new Graph().step('slow', [], { timeoutMs: 20, run: (_out) => new Promise((r) => setTimeout(r, 5_000).unref()) });
    const err = (await new StepRunner({ prefix: '/p', store, logger: memoryLogger() }).run(g.pick('slow')).catch((e: unknown) => e)) as StepRunError;
    expect(hasCode(err.failures[0]?.error, 'CAIRN_TIMEOUT')).toBe(true);
    expect(store.entries.get(g.get('slow').outputPath('/p'))?.status).toBe('FAILED');
  });

  it('rejects an unknown executor before anything runs', async () => {
    const g = new Graph().step('a').step('b', ['a'], { executor: 'nope' });
    const err = await new StepRunner({ prefix: '/p', store: new MemoryStore() }).run(g.pick('b')).catch((e: unknown) => e);
    expect(hasCode(err, 'CAIRN_EXECUTOR')).toBe(true);
    expect(g.calls).toEqual([]);
  });

  it('rejects an inline closure routed to an out-of-process executor', async () => {
    const ex = scriptedExecutor(() => ({}), { name: 'far', capabilities: { inProcess: false, remote: true } });
    const g = new Graph().step('a', [], { executor: 'far' });
    const err = await new StepRunner({ prefix: '/p', store: new MemoryStore(), executors: [ex] }).run(g.pick('a')).catch((e: unknown) => e);
    expect(hasCode(err, 'CAIRN_INLINE_FN_REMOTE')).toBe(true);
    expect(ex.submitted).toEqual([]);
  });
});

describe('cancellation', () => {
  it('records CANCELLED for running steps and resumes on rerun', async () => {
    const prefix = dir();
    const ac = new AbortController();
    let started = 0;
    const g = new Graph()
      .step('done')
      .step('long', ['done'], {
        run: () =>
          new Promise<void>((resolve) => {
            started++;
            ac.abort();
            setTimeout(resolve, 50);
          }),
      })
      .step('after', ['long']);
    const r = new StepRunner({ prefix, logger: memoryLogger() });
    const err = await r.run(g.pick('after'), { signal: ac.signal }).catch((e: unknown) => e);
    expect(hasCode(err, 'CAIRN_CANCELLED')).toBe(true);
    expect(status(g.get('long').outputPath(prefix))).toBe('CANCELLED');
    expect(existsSync(join(g.get('after').outputPath(prefix), '.executor_status'))).toBe(false);
    await r.run(g.pick('after'));
    expect(g.calls).toEqual(['done', 'long', 'long', 'after']);
    expect(started).toBe(2);
  });

  it('cancels through the executor', async () => {
    const ex = scriptedExecutor(() => ({ delayMs: 10_000 }));
    const ac = new AbortController();
    const g = new Graph().step('a', [], { executor: 'scripted' });
    const r = new StepRunner({ prefix: '/p', store: new MemoryStore(), executors: [ex] });
    const p = r.run(g.pick('a'), { signal: ac.signal });
    while (ex.submitted.length === 0) await new Promise((res) => setTimeout(res, 1));
    ac.abort();
    await expect(p).rejects.toMatchObject({ code: 'CAIRN_CANCELLED' });
    expect(ex.cancelled).toHaveLength(1);
    expect(ex.stopped).toBe(1);
  });
});

describe('executor registry keys', () => {
  it('finishes jobs of executors registered under a key other than their name, and records the key', async () => {
    const ex = scriptedExecutor(() => ({ delayMs: 1 }), { name: 'scripted', capabilities: { maxConcurrency: 1 } });
    const store = new MemoryStore();
    const other = scriptedExecutor(() => ({ delayMs: 1 }), { name: 'scripted' });
    const g = new Graph().step('a', [], { executor: 'fast' }).step('b', [], { executor: 'other' });
    const r = new StepRunner({ prefix: '/p', store, executors: { fast: ex, other } });
    const summary = await r.run(g.pick('a', 'b'));
    expect(summary.counts).toEqual({ succeeded: 2 });
    expect(ex.submitted.map((j) => j.spec.name)).toEqual(['a']);
    const rec = store.entries.get(g.get('a').outputPath('/p'))?.record;
    expect(rec?.executor).toBe('fast');
    expect(rec?.attempts.map((a) => a.executor)).toEqual(['fast']);
    expect(other.submitted.map((j) => j.spec.name)).toEqual(['b']);
    expect(store.entries.get(g.get('b').outputPath('/p'))?.record?.attempts[0]?.executor).toBe('other');
  });
});

describe('concurrency', () => {
  it('never runs more than maxConcurrent steps', async () => {
    const ex = scriptedExecutor(() => ({ delayMs: 2 }));
    const specs = Array.from({ length: 40 }, (_, i) => new StepSpec({ name: `s${i}`, hashAttrs: { i }, executor: 'scripted', fn: () => undefined }));
    await new StepRunner({ prefix: '/p', store: new MemoryStore(), executors: [ex], maxConcurrent: 3 }).run(specs);
    expect(ex.submitted).toHaveLength(40);
    expect(ex.maxInFlight).toBe(3);
  });

  it('holds steps until their pool resources are free', async () => {
    const ex = scriptedExecutor(() => ({ delayMs: 3 }));
    let gpusInUse = 0;
    let maxGpus = 0;
    const specs = Array.from({ length: 12 }, (_, i) =>
      new StepSpec({
        name: `g${i}`,
        hashAttrs: { i },
        resources: { gpus: 1 + (i % 2) },
        fn: async () => {
          const n = 1 + (i % 2);
          gpusInUse += n;
          maxGpus = Math.max(maxGpus, gpusInUse);
          await new Promise((r) => setTimeout(r, 3));
          gpusInUse -= n;
        },
      }),
    );
    await new StepRunner({ prefix: '/p', store: new MemoryStore(), executors: [ex], pools: { gpu: 2 }, maxConcurrent: 8 }).run(specs);
    expect(maxGpus).toBe(2);
    const tooBig = new StepSpec({ name: 'huge', resources: { gpus: 3 }, fn: () => undefined });
    const err = (await new StepRunner({ prefix: '/p', store: new MemoryStore(), pools: { gpu: 2 }, logger: memoryLogger() }).run([tooBig]).catch((e: unknown) => e)) as StepRunError;
    expect(err.failures[0]?.error).toMatchObject({ code: 'CAIRN_CONFIG' });
  });

  it('routes steps with resources to remoteExecutor', async () => {
    const ex = scriptedExecutor(() => ({}), { name: 'cluster' });
    const g = new Graph().step('local').step('big', ['local'], { resources: { cpu: 4 } });
    await new StepRunner({ prefix: '/p', store: new MemoryStore(), executors: [ex], remoteExecutor: 'cluster' }).run(g.pick('big'));
    expect(ex.submitted.map((j) => j.spec.name)).toEqual(['big']);
    expect(g.calls).toEqual(['local']);
  });

  it('pulls eagerly, one item at a time (an unbounded generator stops when a step says so)', async () => {
    let pulls = 0;
    let stop = false;
    let maxAhead = 0;
    let done = 0;
    function* steps() {
      for (let i = 0; !stop; i++) {
        pulls++;
        maxAhead = Math.max(maxAhead, pulls - done);
        yield new StepSpec({
          name: `gen${i}`,
          hashAttrs: { i },
          fn: async () => {
            await new Promise((r) => setTimeout(r, 1));
            done++;
            if (i === 20) stop = true;
          },
        });
      }
    }
    const summary = await new StepRunner({ prefix: '/p', store: new MemoryStore(), maxConcurrent: 2 }).run(steps());
    expect(stop).toBe(true);
    expect(summary.counts.succeeded).toBe(pulls);
    expect(maxAhead).toBeLessThanOrEqual(2 + 2 + 1); // running + queued + the one being pulled
  });
});

describe('context', () => {
  it('keeps the caller AsyncLocalStorage value and exposes the client inside inline steps', async () => {
    const als = new AsyncLocalStorage<string>();
    const seen: unknown[] = [];
    const child = new StepSpec({ name: 'child', fn: () => 'from-child' });
    const parent = new StepSpec({
      name: 'parent',
      fn: async (_out, ctx) => {
        seen.push(als.getStore());
        expect(ctx.client).toBe(currentClient());
        const got = await currentClient().submit(child);
        return got.value;
      },
    });
    const r = new StepRunner({ prefix: '/p', store: new MemoryStore() });
    const [p] = await als.run('caller-value', () => r.load([parent]));
    expect(seen).toEqual(['caller-value']);
    expect(p?.value).toBe('from-child');
    expect(() => currentClient()).toThrow(CairnError);
  });
});

describe('events', () => {
  it('reports every state change', async () => {
    const events: RunnerEvent[] = [];
    const store = new MemoryStore();
    const g = new Graph().step('a').step('b', ['a'], { run: () => { throw new Error('x'); } }).step('c', ['b']);
    const r = new StepRunner({ prefix: '/p', store, logger: memoryLogger(), onEvent: (e) => events.push(e) });
    await r.run(g.pick('c')).catch(() => undefined);
    const steps = events.flatMap((e) => (e.type === 'step' ? [`${e.step}:${e.state}`] : [e.type]));
    expect(steps[0]).toBe('run-started');
    expect(steps).toContain('a:succeeded');
    expect(steps).toContain('b:running');
    expect(steps).toContain('b:failed');
    expect(steps).toContain('c:dep-failed');
    expect(steps.at(-1)).toBe('run-finished');
    expect(steps.filter((s) => s.startsWith('a:'))).toEqual(['a:pending', 'a:running', 'a:succeeded']);
    expect(steps.filter((s) => s.startsWith('c:'))).toEqual(['c:pending', 'c:dep-failed']);
    const off = r.on((e) => events.push(e));
    off();
    events.length = 0;
    await r.run(g.pick('a'));
    expect(events.filter((e) => e.type === 'step').map((e) => (e as { state: string }).state)).toEqual(['cached']);
  });
});

describe('prefix', () => {
  it('reads CAIRN_PREFIX when run() is called', async () => {
    const prefix = dir();
    const r = new StepRunner();
    const g = new Graph().step('a');
    process.env.CAIRN_PREFIX = prefix;
    try {
      await r.run(g.pick('a'));
    } finally {
      delete process.env.CAIRN_PREFIX;
    }
    expect(status(g.get('a').outputPath(prefix))).toBe('SUCCESS');
    rmSync(prefix, { recursive: true, force: true });
  });
});

describe('routing errors name what is wrong', () => {
  it('an unknown executor on an inline closure is CAIRN_EXECUTOR (not CAIRN_INLINE_FN_REMOTE)', async () => {
    const h = apply({ name: 'closure', version: 'v1', fn: () => 1, inputs: {}, executor: 'nope' });
    const err = await new StepRunner({ prefix: '/p', store: new MemoryStore() }).run([h]).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'CAIRN_EXECUTOR' });
    expect((err as Error).message).toContain('"nope"');
  });

  it('two different steps pinned to one path, lowered separately, are CAIRN_DUPLICATE_STEP naming both', async () => {
    const a = apply({ name: 'a', version: 'v1', fn: () => 'a', inputs: {} });
    const b = apply({ name: 'b', version: 'v1', fn: () => 'b', inputs: {}, pin: 'a/v1' });
    const r = new StepRunner({ prefix: '/p', store: new MemoryStore(), layout: 'versioned' });
    // Lowered by the caller, one call each: only the run sees both.
    const err = await r.load([lower(a, { layout: 'versioned' }), lower(b, { layout: 'versioned' })]).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'CAIRN_DUPLICATE_STEP' });
    expect((err as Error).message).toMatch(/"a-[0-9a-f]{16}" and "b-[0-9a-f]{16}"/);
    // Given as handles, they are lowered in one call, which refuses them by name@version.
    const both = await r.load([a, b]).catch((e: unknown) => e);
    expect(both).toMatchObject({ code: 'CAIRN_DUPLICATE_STEP' });
    expect((both as Error).message).toMatch(/Steps "b@v1" and "a@v1" resolve to one output path/);
  });
});
