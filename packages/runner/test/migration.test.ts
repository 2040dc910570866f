/**
 * A store written before content-addressed paths (fixtures/store-0.1: written by Cairn 0.1 with
 * fixtures/store-0.1/pipeline-at-write.mjs, its steps at `{name}/{version}`). With the default
 * layout its outputs are not reused, and plan and run say so and how to reuse them; with
 * `layout: 'versioned'` the same store serves everything, with no drift.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { apply, OUT } from '@cairn/core';
import { StepRunner } from '../src/index.js';
import { memoryLogger, tempDirs } from './helpers/graph.js';

const dir = tempDirs();
const FIXTURE = fileURLToPath(new URL('./fixtures/store-0.1/store', import.meta.url));

/** The pipeline of pipeline-at-write.mjs, rewritten here: the same names, versions and inputs. */
function pipeline() {
  const calls: string[] = [];
  const raw = apply({ name: 'raw', version: '2026.11.30', inputs: { out: OUT, n: 3 }, fn: ({ out, n }: { out: string; n: number }) => {
    calls.push('raw');
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'data.txt'), Array.from({ length: n }, (_, i) => String(i)).join('\n'));
    return { rows: n };
  } });
  const model = apply({ name: 'model', version: '2026.11.30', inputs: { data: raw, out: OUT, smoothing: 0.5 }, fn: ({ data, out, smoothing }: { data: string; out: string; smoothing: number }) => {
    calls.push('model');
    const t = readFileSync(join(data, 'data.txt'), 'utf8');
    writeFileSync(join(out, 'model.json'), JSON.stringify({ smoothing, lines: t.split('\n').length }));
    return { smoothing };
  } });
  const evaluate = apply({ name: 'eval', version: '2026.11.30', inputs: { model, out: OUT }, fn: ({ model }: { model: string; out: string }) => {
    calls.push('eval');
    const m = JSON.parse(readFileSync(join(model, 'model.json'), 'utf8')) as { lines: number; smoothing: number };
    return { score: m.lines * m.smoothing };
  } });
  return { evaluate, calls };
}

function copyOfFixture(): string {
  const prefix = join(dir(), 'store');
  cpSync(FIXTURE, prefix, { recursive: true });
  return prefix;
}

describe('a store written by Cairn 0.1', () => {
  it("layout: 'versioned' serves it as it is: nothing runs, nothing drifts", async () => {
    const prefix = copyOfFixture();
    const logger = memoryLogger();
    const r = new StepRunner({ prefix, logger, layout: 'versioned' });
    const p = pipeline();
    const [result] = await r.load([p.evaluate]);
    expect(result).toEqual({ path: join(prefix, 'eval/2026.11.30'), value: { score: 1.5 } });
    expect(p.calls).toEqual([]);
    expect(logger.lines).toEqual([]);
  });

  it('the default layout rebuilds at content-addressed paths, keeps the old outputs, and says how to reuse them', async () => {
    const prefix = copyOfFixture();
    const logger = memoryLogger();
    const r = new StepRunner({ prefix, logger });
    const p = pipeline();
    const plan = await r.plan([p.evaluate]);
    expect(plan.steps.map((s) => s.state)).toEqual(['run', 'run', 'run']);
    expect(plan.steps[0]?.reason).toBe(
      `not built at its content-addressed path; an output with this very identity is at ${join(prefix, 'raw/2026.11.30')} (the 'versioned' layout, as Cairn wrote before 0.2), which this layout does not reuse: set layout: 'versioned' on the step or the runner to serve it (runner README, "Migrating a store")`,
    );
    const [result] = await r.load([p.evaluate]);
    expect(result?.value).toEqual({ score: 1.5 });
    expect(result?.path).toMatch(/\/eval\/2026\.11\.30-[0-9a-f]{16}$/);
    expect(p.calls).toEqual(['raw', 'model', 'eval']);
    const notes = logger.lines.filter((l) => l.includes('Migrating a store'));
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(/^WARN 3 step\(s\) have an output of the same identity at their versioned path \{name\}\/\{version\} \(eval@2026\.11\.30 at .*\/eval\/2026\.11\.30, model@2026\.11\.30 at .*, raw@2026\.11\.30 at .*\), written before content-addressed paths/);
    for (const name of ['raw', 'model', 'eval']) expect(existsSync(join(prefix, name, '2026.11.30', '.executor_status'))).toBe(true);
    // Rebuilt once: the next run is cached and says nothing.
    const again = new StepRunner({ prefix, logger: memoryLogger() });
    expect((await again.run([pipeline().evaluate])).counts).toEqual({ cached: 1 });
  });
});
