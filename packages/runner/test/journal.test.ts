/**
 * The run journal (src/journal/): every run of a StepRunner — not only `cairn run`'s — writes
 * `{prefix}/.cairn/runs/{runId}.jsonl` through its store's browser, on a local directory, in a
 * MemoryStore and on a store that cannot append (an object store: rewritten whole). The object
 * store's browser is the boundary faked here (a recorder of writes); the S3 store itself is
 * covered against a real gateway in @cairn/store-s3's ui test.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apply, indexSpecs, OUT, StepSpec } from '@cairn/core';
import { journalDir, journalFile, MemoryStore, StepRunner, type JournalEntry, type RunnerEvent, type StoreBrowser } from '../src/index.js';
import { journalText } from '../src/journal/line.js';
import { writePlan } from '../src/journal/plan.js';
import { OBJECT_FLUSH_MS, RunJournal } from '../src/journal/writer.js';
import { memoryLogger, tempDirs } from './helpers/graph.js';

const dir = tempDirs();

/** raw → model → eval; `fail` makes eval throw. */
function pipeline(fail = false) {
  const raw = apply({ name: 'raw', version: 'v1', inputs: { out: OUT }, fn: () => ({ rows: 3 }) });
  const model = apply({ name: 'model', version: 'v1', inputs: { raw, out: OUT }, fn: () => ({ ok: true }) });
  const evaluate = apply({ name: 'eval', version: fail ? 'v-fail' : 'v1', inputs: { model }, fn: () => {
    if (fail) throw new Error('eval broke: "quoted"\nsecond line');
    return { score: 1 };
  } });
  return { raw, model, evaluate };
}

const parse = (text: string): JournalEntry[] => text.trim().split('\n').map((l) => JSON.parse(l) as JournalEntry);
const steps = (entries: readonly JournalEntry[]) => entries.filter((e): e is Extract<JournalEntry, { type: 'step' }> => e.type === 'step');

describe('every run writes its journal', () => {
  it('a plain StepRunner on a local prefix: run-started, the plan with dependencies, every event, run-finished; a second run its own', async () => {
    const prefix = dir();
    const runner = new StepRunner({ prefix, logger: memoryLogger() });
    const { evaluate } = pipeline();
    const first = await runner.run([evaluate]);
    const lines = parse(readFileSync(journalFile(prefix, first.runId), 'utf8'));
    expect(lines[0]).toMatchObject({ type: 'run-started', runId: first.runId, prefix });
    const plan = lines[1] as Extract<JournalEntry, { type: 'plan' }>;
    expect(plan).toMatchObject({ type: 'plan', runId: first.runId, targets: ['eval'] });
    expect(plan.steps.map((s) => s.name)).toEqual(['raw', 'model', 'eval']);
    expect(plan.steps.map((s) => s.deps)).toEqual([[], [0], [1]]);
    expect(typeof plan.host).toBe('string');
    expect(steps(lines).filter((e) => e.state === 'succeeded').map((e) => e.step).sort()).toEqual(['eval', 'model', 'raw']);
    expect(steps(lines).find((e) => e.state === 'running')?.logs?.stdout).toMatch(/stdout/);
    expect(lines.at(-1)).toMatchObject({ type: 'run-finished', counts: { succeeded: 3 } });

    // Everything built: the cache hits are in the journal (no step record says so).
    const second = await runner.run([evaluate]);
    const again = parse(readFileSync(journalFile(prefix, second.runId), 'utf8'));
    expect(steps(again).filter((e) => e.state === 'cached').map((e) => e.step)).toEqual(['eval']);
    expect(again.at(-1)).toMatchObject({ type: 'run-finished', counts: { cached: 1 } });
  });

  it('a failed step: its error flattened to name and message; the journal is whole when run() rejects', async () => {
    const prefix = dir();
    const runner = new StepRunner({ prefix, logger: memoryLogger() });
    let runId = '';
    runner.on((e) => (runId = e.runId));
    await expect(runner.run([pipeline(true).evaluate])).rejects.toThrow(/eval broke/);
    const lines = parse(readFileSync(journalFile(prefix, runId), 'utf8'));
    const failed = steps(lines).find((e) => e.state === 'failed')!;
    expect(failed.error).toMatchObject({ name: 'Error', message: 'eval broke: "quoted"\nsecond line' });
    expect(lines.at(-1)).toMatchObject({ type: 'run-finished', counts: { succeeded: 2, failed: 1 } });
  });

  it('journal: false writes none; a dry run writes none', async () => {
    const prefix = dir();
    await new StepRunner({ prefix, journal: false, logger: memoryLogger() }).run([pipeline().evaluate]);
    await new StepRunner({ prefix, logger: memoryLogger() }).run([pipeline().evaluate], { dryRun: true });
    expect(existsSync(journalDir(prefix))).toBe(false);
    expect(() => new StepRunner({ journal: 'yes' as unknown as boolean })).toThrow(/journal must be true or false/);
  });

  it('a MemoryStore keeps it beside its steps when asked (not durable: none by default); a generator of steps gets its plan once pulled', async () => {
    const store = new MemoryStore();
    // Not durable: no journal by default (nothing else could read it); asked for, it is kept.
    const other = new MemoryStore();
    const quiet = await new StepRunner({ prefix: '/mem', store: other, logger: memoryLogger() }).run([pipeline().model]);
    expect(quiet.counts.succeeded).toBeGreaterThan(0);
    expect(await other.browse.listFiles('/mem/.cairn/runs')).toEqual([]);
    const runner = new StepRunner({ prefix: '/mem', store, logger: memoryLogger(), journal: true });
    const { model, evaluate } = pipeline();
    function* items() {
      yield model;
      yield evaluate;
    }
    const summary = await runner.run(items());
    const text = new TextDecoder().decode((await store.browse.readFile(journalFile('/mem', summary.runId)))!);
    const lines = parse(text);
    expect(lines[0]!.type).toBe('run-started');
    const plan = lines.find((l) => l.type === 'plan') as Extract<JournalEntry, { type: 'plan' }>;
    expect(plan.steps.map((s) => s.name).sort()).toEqual(['eval', 'model', 'raw']);
    expect(lines.at(-1)).toMatchObject({ type: 'run-finished', counts: { succeeded: 3 } });
    expect((await store.browse.listFiles('/mem/.cairn/runs')).map((f) => f.path)).toEqual([journalFile('/mem', summary.runId)]);
  });

  it('a journal that cannot be written is given up with one warning; the run succeeds', async () => {
    const prefix = dir();
    const logger = memoryLogger();
    // A file where the journal directory should be.
    const { writeFileSync, mkdirSync } = await import('node:fs');
    mkdirSync(join(prefix, '.cairn'), { recursive: true });
    writeFileSync(join(prefix, '.cairn', 'runs'), 'not a directory');
    const summary = await new StepRunner({ prefix, logger }).run([pipeline().evaluate]);
    expect(summary.counts.succeeded).toBe(3);
    expect(logger.lines.filter((l) => l.includes('run journal'))).toHaveLength(1);
    expect(logger.lines.find((l) => l.includes('run journal'))).toMatch(/journal: false/);
  });
});

describe('journal lines', () => {
  it('a step event written field by field is the JSON of the event, whatever its strings hold', () => {
    const names = ['plain', 'with "quotes"', 'back\\slash', 'new\nline', 'tab\tand\u0001', 'emoji 😀', 'lone \ud800 surrogate', '<img src=x onerror=alert(1)>', 'ünïcødé'];
    for (const name of names) {
      const e: RunnerEvent = { type: 'step', runId: 'r-1', step: name, path: `/p/${name}`, state: 'running', attempt: 2, logs: { stdout: `/p/${name}/o`, stderr: `/p/${name}/e` }, time: 1234 };
      expect(JSON.parse(journalText(e))).toEqual(JSON.parse(JSON.stringify(e)));
      const bare: RunnerEvent = { type: 'step', runId: 'r-1', step: name, path: '/p/x', state: 'pending', time: 5 };
      expect(JSON.parse(journalText(bare))).toEqual(bare);
    }
  });

  it('lines longer than a buffer, and many lines, arrive whole and in order', async () => {
    const written: string[] = [];
    const browse = { appendFile: async (_p: string, d: string | Uint8Array) => void written.push(Buffer.from(d).toString('utf8')), writeFile: async () => undefined } as unknown as StoreBrowser;
    const j = new RunJournal(browse, '/p', 'r');
    const big = 'x'.repeat(400_000);
    const middling = 'é'.repeat(30_000);
    for (let i = 0; i < 20_000; i++) j.write({ type: 'step', runId: 'r', step: i === 777 ? big : i === 3 ? middling : `s${i}`, path: `/p/s${i}`, state: 'pending', time: i });
    j.plan('/p', [new StepSpec({ name: 'é', hashAttrs: {}, fn: () => undefined })]);
    await j.close();
    const lines = parse(written.join(''));
    expect(lines).toHaveLength(20_001);
    expect(lines.slice(0, -1).map((l) => (l as { time: number }).time)).toEqual(Array.from({ length: 20_000 }, (_, i) => i));
    expect((lines[777] as { step: string }).step).toBe(big);
    expect((lines[3] as { step: string }).step).toBe(middling);
    expect(lines.at(-1)).toMatchObject({ type: 'plan', steps: [{ name: 'é', deps: [] }] });
  });
});

describe('the plan', () => {
  it("lists every step as core's index of the graph does: dependencies first, shared and repeated ones once, several roots", () => {
    const spec = (name: string, deps: StepSpec[] = []) => new StepSpec({ name, hashAttrs: { name }, deps, fn: () => undefined });
    const a = spec('a');
    const b = spec('b', [a]);
    const c = spec('c', [a, b, a]);
    const d = spec('d', [c, b]);
    const e = spec('e', [a]);
    const targets = [d, e, c, spec('f', [d, e])];
    const parts: string[] = [];
    writePlan((t) => parts.push(t), 'r', '/p', targets);
    const plan = JSON.parse(parts.join('')) as Extract<JournalEntry, { type: 'plan' }>;
    const { nodes, graph } = indexSpecs(targets);
    expect(plan.steps).toEqual(nodes.map((s, i) => ({ name: s.name, path: s.outputPath('/p'), deps: [...graph.deps.subarray(graph.offsets[i], graph.offsets[i + 1])] })));
    expect(plan.targets).toEqual(['d', 'e', 'c', 'f']);
  });

  it('step lines of runs in turn carry each its own run id and states', () => {
    for (const runId of ['r1', 'r"2', 'r1']) {
      for (const state of ['pending', 'cached', 'pending'] as const) {
        const event = { type: 'step', runId, step: 's', path: '/p/s', state, time: 5 } as RunnerEvent;
        expect(JSON.parse(journalText(event))).toEqual(event);
      }
    }
  });
});

/** A browser of a store that cannot append (an object store): records each whole write. */
function objectBrowser(): { browse: StoreBrowser; writes: { path: string; text: string }[] } {
  const writes: { path: string; text: string }[] = [];
  const browse = { writeFile: async (path: string, data: string | Uint8Array) => void writes.push({ path, text: Buffer.from(data).toString('utf8') }) } as unknown as StoreBrowser;
  return { browse, writes };
}

const event = (i: number): RunnerEvent => ({ type: 'step', runId: 'r1', step: `s${i}`, path: `s3://b/p/s${i}`, state: 'running', attempt: 1, time: i });

describe('a journal on a store that cannot append', () => {
  it('is rewritten whole while the run goes on (not per event), and at close', async () => {
    const { browse, writes } = objectBrowser();
    const w = new RunJournal(browse, 's3://b/p', 'r1');
    w.write(event(1));
    expect(writes).toEqual([]); // nothing per event
    await new Promise((r) => setTimeout(r, OBJECT_FLUSH_MS + 1500));
    expect(writes.map((x) => [x.path, x.text.split('\n').length - 1])).toEqual([['s3://b/p/.cairn/runs/r1.jsonl', 1]]);
    w.write(event(2));
    await new Promise((r) => setTimeout(r, OBJECT_FLUSH_MS + 1500));
    expect(writes.length).toBe(2); // the next event starts the timer again
    expect(writes[1]!.text.split('\n').length - 1).toBe(2);
    await new Promise((r) => setTimeout(r, OBJECT_FLUSH_MS + 300));
    expect(writes.length).toBe(2); // nothing new: no rewrite
    w.write(event(3));
    await w.close();
    expect(writes.length).toBe(3);
    expect(parse(writes[2]!.text).map((e) => (e as { time: number }).time)).toEqual([1, 2, 3]);
    await new Promise((r) => setTimeout(r, OBJECT_FLUSH_MS + 300));
    expect(writes.length).toBe(3); // closed: no timer left
  }, 20_000);
});
