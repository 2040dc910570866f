/**
 * A store Marin wrote (issue 20), from Marin's documented formats (helpers/marin-store.ts): its
 * `{name}/{version}` artifacts are served to the same recipes under the 'versioned' layout with no
 * drift warning (payloads compared, not md5 against XXH64), a real change is drift with its diff,
 * a pinned Cairn fingerprint does not fail on them, the legacy status log is read, and Marin's
 * lock is honoured until it goes stale.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apply, hasCode, lower, OUT } from '@cairn/core';
import { type RunnerEvent, StepRunner, type StepRunnerOptions } from '../src/index.js';
import { memoryLogger, tempDirs } from './helpers/graph.js';
import { writeMarinArtifact, writeMarinLock } from './helpers/marin-store.js';
import { rejection } from './helpers/thrown.js';

const dir = tempDirs();
const V = '2026.11.30';

/** The Cairn port of a Marin pipeline raw → model → eval. */
function pipeline(opts: { smoothing?: number; pinned?: boolean } = {}) {
  const calls: string[] = [];
  const raw = apply({ name: 'raw', version: V, inputs: { rows: 3, out: OUT }, fn: ({ out, rows }: { out: string; rows: number }) => {
    calls.push('raw');
    writeFileSync(join(out, 'rows'), String(rows));
  } });
  const modelOf = (expectedFingerprint?: string) =>
    apply({
      name: 'model',
      version: V,
      inputs: { data: raw, out: OUT, smoothing: opts.smoothing ?? 0.5 },
      runtime: { workers: 4 },
      ...(expectedFingerprint !== undefined ? { expectedFingerprint } : {}),
      fn: ({ out, smoothing }: { out: string; smoothing: number; data: string; workers: number }) => {
        calls.push('model');
        writeFileSync(join(out, 'model'), String(smoothing));
        return { smoothing };
      },
    });
  const model = opts.pinned ? modelOf(lower(modelOf(), { layout: 'versioned' }).fingerprint) : modelOf();
  const evaluate = apply({ name: 'eval', version: V, inputs: { model }, fn: () => {
    calls.push('eval');
    return { score: 1 };
  } });
  return { calls, raw, model, evaluate };
}

/** The store Marin left after running that pipeline (smoothing 0.5, 4 workers). */
function marinStore(prefix: string, status?: string): void {
  writeMarinArtifact(prefix, { name: 'raw', version: V, fingerprintConfig: { rows: 3, out: '<output_path>' }, config: { rows: 3, out: join(prefix, 'raw', V) }, files: { rows: '3' }, ...(status ? { status } : {}) });
  writeMarinArtifact(prefix, {
    name: 'model',
    version: V,
    fingerprintConfig: { data: `raw@${V}`, out: '<output_path>', smoothing: 0.5, workers: '<workers>' },
    config: { data: join(prefix, 'raw', V), out: join(prefix, 'model', V), smoothing: 0.5, workers: 4 },
    deps: [`raw@${V}`],
    result: { smoothing: 0.5 },
    files: { model: '0.5' },
  });
  writeMarinArtifact(prefix, { name: 'eval', version: V, fingerprintConfig: { model: `model@${V}` }, config: { model: join(prefix, 'model', V) }, deps: [`model@${V}`], result: { score: 0.75 } });
}

function runner(prefix: string, extra: Partial<StepRunnerOptions> = {}) {
  const logger = memoryLogger();
  const events: RunnerEvent[] = [];
  const r = new StepRunner({ prefix, layout: 'versioned', logger, onEvent: (e) => events.push(e), ...extra });
  return { r, logger, events };
}

describe('a store Marin wrote', () => {
  it('is served to the same recipes: nothing runs, no drift warning, Marin’s results are loaded', async () => {
    const prefix = dir();
    marinStore(prefix);
    const p = pipeline();
    const { r, logger } = runner(prefix);
    const [loaded] = await r.load([p.evaluate]);
    expect(p.calls).toEqual([]);
    expect(loaded).toEqual({ path: join(prefix, 'eval', V), value: { score: 0.75 } });
    expect(logger.lines.filter((l) => !l.startsWith('INFO'))).toEqual([]);
    // Examined one by one (each a target), every step is cached.
    const plan = await r.plan([p.raw, p.model, p.evaluate]);
    expect(plan.steps.map((s) => [s.name, s.state])).toEqual([['raw', 'cached'], ['model', 'cached'], ['eval', 'cached']]);
  });

  it("a Cairn fingerprint pinned on a Marin artifact does not fail it (the hashes differ, the recipes do not)", async () => {
    const prefix = dir();
    marinStore(prefix);
    const p = pipeline({ pinned: true });
    await runner(prefix).r.run([p.model]);
    expect(p.calls).toEqual([]);
  });

  it('a real change is drift with its diff; onDrift warn serves it as Marin does', async () => {
    const prefix = dir();
    marinStore(prefix);
    const p = pipeline({ smoothing: 5 });
    const { r } = runner(prefix);
    const err = await rejection(r.run([p.model]));
    expect(hasCode(err, 'CAIRN_STEP_FAILED') || hasCode(err, 'CAIRN_DRIFT')).toBe(true);
    const plan = await r.plan([p.model]);
    expect(plan.steps.find((s) => s.name === 'model')?.state).toBe('drifted');
    expect(JSON.stringify(plan.steps.find((s) => s.name === 'model'))).toMatch(/smoothing: 0\.5 -> 5/);
    const warned = runner(prefix, { onDrift: 'warn' });
    await warned.r.run([p.model]);
    expect(p.calls).toEqual([]);
    expect(warned.logger.lines.join('\n')).toMatch(/model@2026\.11\.30: recipe drift[\s\S]*smoothing: 0\.5 -> 5/);
    expect(readFileSync(join(prefix, 'model', V, 'model'), 'utf8')).toBe('0.5'); // nothing stored was changed
  });

  it("reads Marin's legacy JSON-lines status log", async () => {
    const prefix = dir();
    const log = [`{"date": "2026-11-30T10:00:00", "status": "RUNNING", "message": ""}`, `{"date": "2026-11-30T10:05:00", "status": "SUCCESS", "message": ""}`].join('\n');
    marinStore(prefix, log);
    const p = pipeline();
    await runner(prefix).r.run([p.raw]);
    expect(p.calls).toEqual([]);
  });

  it("honours Marin's lock: a fresh one is waited for until it goes stale, then taken over; a stale one at once", async () => {
    const prefix = dir();
    const p = pipeline();
    const rawPath = lower(p.raw, { layout: 'versioned' }).outputPath(prefix);
    writeMarinLock(rawPath, 'tpu-vm-3-140234', 0);
    const { r, events } = runner(prefix, { leases: { heartbeatMs: 200, staleMs: 1500 } });
    const t0 = Date.now();
    await r.run([p.raw]);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
    expect(events.some((e) => e.type === 'step' && e.state === 'waiting-lease')).toBe(true);
    expect(p.calls).toEqual(['raw']);
    expect(existsSync(join(rawPath, '.executor_status.lock'))).toBe(false);

    const q = pipeline();
    const modelPath = lower(q.model, { layout: 'versioned' }).outputPath(prefix);
    writeMarinLock(modelPath, 'tpu-vm-3-140234', 3600);
    const t1 = Date.now();
    await runner(prefix).r.run([q.model]);
    expect(Date.now() - t1).toBeLessThan(5000);
    expect(q.calls).toEqual(['model']);
  });
});
