/** Unit tests of pure pieces: the layered layout, the progress renderer and error formatting. */
import pc from 'picocolors';
import { describe, expect, it } from 'vitest';
import { CairnError } from '@cairn/core';
import { ATTEMPT_ENDS, type RunnerEvent } from '@cairn/runner';
import { ExitCode, exitCodeOf, formatError } from '../src/errors.js';
import { clusterModel, type ClusterGroup } from '../src/graph/clusters.js';
import { layeredLayout } from '../src/graph/layout.js';
import { ATTEMPT_COLORS } from '../src/report/html.js';
import { ATTEMPT_STATES } from '../src/states.js';
import { Progress } from '../src/ui/progress.js';
import { replay } from './helpers/vterm.js';

describe('attempt ends', () => {
  it("every way an attempt ends (the runner's ATTEMPT_ENDS) has the runner's label, a terminal colour and a report colour", () => {
    for (const [end, info] of Object.entries(ATTEMPT_ENDS)) {
      expect(ATTEMPT_STATES[end as keyof typeof ATTEMPT_ENDS], end).toMatchObject({ label: info.label });
      expect(ATTEMPT_COLORS[end], end).toMatch(/^#[0-9a-f]{6}$/);
    }
  });
});

describe('layeredLayout', () => {
  it('puts each node one layer right of its deepest dependency; a long edge passes a dummy point in each layer it crosses', () => {
    // 0 -> 1 -> 3, 0 -> 2 -> 3, 0 -> 3 (skips layer 1)
    const r = layeredLayout(4, [[0, 1], [1, 3], [0, 2], [2, 3], [0, 3]]);
    expect(r.layer).toEqual([0, 1, 1, 2]);
    expect(r.layers).toBe(3);
    expect(Math.abs((r.y[1] as number) - (r.y[2] as number))).toBeGreaterThanOrEqual(1); // siblings a row apart
    const skip = r.routes[4] as number[];
    expect(skip.filter((_, i) => i % 2 === 0)).toEqual([0, 1, 2]); // through layer 1
    const dummyY = skip[3] as number;
    // The dummy keeps its own room in layer 1: at least (1 + 0.3) / 2 from each box's centre there.
    for (const v of [1, 2]) expect(Math.abs(dummyY - (r.y[v] as number))).toBeGreaterThanOrEqual(0.65 - 1e-9);
  });

  it('breaks a cycle by reversing one edge and still gives every node a layer', () => {
    const r = layeredLayout(3, [[0, 1], [1, 2], [2, 1]]);
    expect(r.reversed.filter(Boolean)).toHaveLength(1);
    expect(r.layer.every((l) => Number.isInteger(l) && l >= 0)).toBe(true);
    expect(r.routes.every((pts) => pts.length >= 4)).toBe(true);
  });
});

describe('clusterModel', () => {
  const names = [...Array.from({ length: 300 }, (_, i) => `tokenize-shard-${String(i).padStart(4, '0')}`), ...Array.from({ length: 300 }, (_, i) => `stats-shard-${i}`), 'train'];
  const layers = names.map((n) => (n.startsWith('tokenize') ? 0 : n.startsWith('stats') ? 1 : 2));

  it('groups by the name prefix members share, then by ranges named by their first and last member', () => {
    const m = clusterModel(names, layers, { maxChildren: 8, small: 10 });
    const top = m.expand(m.root);
    expect(top.map((u) => (u.kind === 'group' ? `${u.label} ×${u.steps.length}` : 'step'))).toEqual(['tokenize-shard ×300', 'stats-shard ×300', 'step']);
    const shards = m.expand(top[0] as ClusterGroup);
    expect(shards).toHaveLength(4); // ranges: half of maxChildren
    expect((shards[0] as ClusterGroup).label).toBe('tokenize-shard 0000–0074');
    expect(m.expand(top[0] as ClusterGroup)).toBe(shards); // the same parts every time
  });

  it('falls back to layers when names share nothing, and opens a first view within the limit', () => {
    const words = Array.from({ length: 90 }, (_, i) => `w${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}x`);
    const m = clusterModel(words, words.map((_, i) => i % 3), { maxChildren: 8, small: 5 });
    const parts = m.expand(m.root);
    expect(parts.map((u) => (u.kind === 'group' ? u.label : 'step'))).toEqual(['all steps · L0', 'all steps · L1', 'all steps · L2']);
    const view = m.initial(20);
    expect(view.length).toBeLessThanOrEqual(20);
    expect(view.reduce((s, u) => s + (u.kind === 'group' ? u.steps.length : 1), 0)).toBe(90);
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

  it("leaves no fragment of the bar after Ctrl-C (the terminal echoes ^C where the cursor is)", async () => {
    let tty = '';
    const p = new Progress({ mode: 'tty', write: (s) => (tty += s), colors: pc.createColors(false), columns: () => 120 });
    p.onEvent(step('running', Date.now(), { attempt: 1 }));
    await new Promise((r) => setTimeout(r, 250));
    expect(tty).toContain('▶ train/v1');
    tty += '^C'; // the terminal's echo, below the block
    p.note('Interrupted: cancelling running steps (Ctrl-C again to exit at once).');
    p.onEvent(step('cancelled', Date.now()));
    p.finish();
    const screen = replay(tty);
    expect(screen.at(-2)).toBe('Interrupted: cancelling running steps (Ctrl-C again to exit at once).');
    expect(screen.at(-1)).toMatch(/cancel\s+train$/);
    expect(screen.join('\n')).not.toMatch(/[█░▶]|\^C/);
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
