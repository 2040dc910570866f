/** Unit tests of pure pieces: the layered layout, the progress renderer and error formatting. */
import pc from 'picocolors';
import { describe, expect, it } from 'vitest';
import { CairnError } from '@cairn/core';
import type { RunnerEvent } from '@cairn/runner';
import { ExitCode, exitCodeOf, formatError } from '../src/errors.js';
import { layeredLayout } from '../src/graph/layout.js';
import { Progress } from '../src/ui/progress.js';

describe('layeredLayout', () => {
  it('puts each node one column right of its deepest dependency', () => {
    // 0 -> 1 -> 3, 0 -> 2 -> 3, 0 -> 3
    const r = layeredLayout(4, [[0, 1], [1, 3], [0, 2], [2, 3], [0, 3]], 10);
    expect(r.x).toEqual([0, 1, 1, 2]);
    expect(r.columns).toBe(3);
    expect(new Set(r.y.slice(1, 3)).size).toBe(2); // siblings on different rows
  });

  it('wraps a wide layer into several columns and survives a cycle', () => {
    const edges: [number, number][] = Array.from({ length: 9 }, (_, i) => [0, i + 1]);
    const r = layeredLayout(10, edges, 4);
    expect(r.columns).toBe(1 + 3);
    expect(Math.max(...r.y)).toBeLessThan(4);
    const cyc = layeredLayout(3, [[0, 1], [1, 2], [2, 1]], 4);
    expect(cyc.x).toHaveLength(3);
    expect(cyc.x.every((v) => Number.isInteger(v))).toBe(true);
  });
});

describe('Progress', () => {
  const step = (state: string, time: number, extra: Partial<Record<string, unknown>> = {}) =>
    ({ type: 'step', runId: 'r', step: 'train', path: '/s/train/v1', state, time, ...extra }) as unknown as RunnerEvent;

  it('writes plain lines without a TTY and JSON lines with --json', () => {
    let plain = '';
    const p = new Progress({ mode: 'plain', write: (s) => (plain += s), colors: pc.createColors(false) });
    p.onEvent(step('pending', 1000));
    p.onEvent(step('running', 1000, { attempt: 1 }));
    p.onEvent(step('succeeded', 3500, { attempt: 1 }));
    p.finish();
    expect(plain).toMatch(/running\s+train\n/);
    expect(plain).toMatch(/done\s+train 2\.5s\n/);
    let json = '';
    const j = new Progress({ mode: 'json', write: (s) => (json += s), colors: pc.createColors(false) });
    j.onEvent(step('failed', 1, { error: new CairnError('CAIRN_TIMEOUT', 'too slow') }));
    expect(JSON.parse(json)).toMatchObject({ state: 'failed', error: { name: 'CairnError', message: 'too slow', code: 'CAIRN_TIMEOUT' } });
  });

  it('keeps a live block on a TTY: the bar, counts and running steps, cleared before each line', async () => {
    let tty = '';
    const p = new Progress({ mode: 'tty', write: (s) => (tty += s), colors: pc.createColors(false), columns: () => 120 });
    p.onEvent(step('running', Date.now(), { attempt: 1 }));
    await new Promise((r) => setTimeout(r, 250));
    expect(tty).toMatch(/0\/1 .*1 running/);
    expect(tty).toContain('▶ train/v1');
    p.onEvent(step('failed', Date.now(), { error: new Error('boom') }));
    expect(tty).toContain('\u001b[2A\u001b[0J'); // the two-line block is erased before the line
    expect(tty).toContain('FAILED   train: boom');
    p.finish();
  });
});

describe('errors', () => {
  it('maps codes to exit codes and adds the cause chain only when verbose', () => {
    expect(exitCodeOf(new CairnError('CAIRN_CONFIG', 'x'))).toBe(ExitCode.usage);
    expect(exitCodeOf(new CairnError('CAIRN_GRAPH_CYCLE', 'x'))).toBe(ExitCode.usage);
    expect(exitCodeOf(new CairnError('CAIRN_CANCELLED', 'x'))).toBe(ExitCode.interrupted);
    expect(exitCodeOf(new CairnError('CAIRN_STORE', 'x'))).toBe(ExitCode.failed);
    const err = new CairnError('CAIRN_CONFIG', 'Bad config. Fix it.', { cause: new Error('inner problem') });
    expect(formatError(err, false)).toBe('Bad config. Fix it. [CAIRN_CONFIG]');
    expect(formatError(err, true)).toContain('caused by: inner problem');
  });
});
