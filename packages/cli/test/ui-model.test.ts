/**
 * The pure parts of `cairn ui`: folding a run journal (plan first, events after, corrupt lines
 * counted, a viewer's changes since its last look), the trace's CSV/TSV quoting, and which
 * binds are loopback (no token needed).
 */
import { describe, expect, it } from 'vitest';
import { isLoopback, tokenMatches } from '../src/web/auth.js';
import { RunFold } from '../src/web/run-fold.js';
import { formatTrace, type TraceRow } from '../src/web/trace.js';

const P = '/s';
const line = (o: object) => `${JSON.stringify(o)}\n`;
const step = (name: string, state: string, time: number, extra: object = {}) => line({ type: 'step', runId: 'r', step: name, path: `${P}/${name}`, state, time, ...extra });

describe('RunFold', () => {
  it('draws the plan before any step runs, then follows states; counts corrupt lines', () => {
    const f = new RunFold('r', P);
    f.feed(
      line({ type: 'run-started', runId: 'r', prefix: P, time: 1 }) +
        line({ type: 'plan', runId: 'r', time: 1, host: 'h', user: 'u', targets: ['b'], steps: [{ name: 'a', path: `${P}/a`, deps: [] }, { name: 'b', path: `${P}/b`, deps: [0] }] }) +
        '{ not json\n',
    );
    expect(f.toJson().stepList.map((s) => [s.name, s.key, s.state, s.deps])).toEqual([
      ['a', 'a', 'pending', []],
      ['b', 'b', 'pending', [0]],
    ]);
    expect(f.summary()).toMatchObject({ running: true, host: 'h', user: 'u', targets: ['b'], corruptLines: 1 });
    const seen = f.seq;
    f.feed(step('a', 'running', 2, { attempt: 1 }) + step('a', 'retrying', 3, { attempt: 1, error: { name: 'E', message: 'boom\nmore' } }) + step('a', 'running', 4, { attempt: 2 }) + step('a', 'succeeded', 5, { attempt: 2 }));
    const changes = f.changesSince(seen);
    expect(changes.map((c) => [c[0], c[1], c[2], c[3], c[4]])).toEqual([[0, 'succeeded', 2, 2, 5]]);
    expect(f.steps[0]!.attemptErrors.get(1)).toEqual({ state: 'failed', start: 2, end: 3, error: 'boom' });
    expect(f.changesSince(f.seq)).toEqual([]);
    f.feed(step('b', 'dep-failed', 6, { message: 'a failed' }) + line({ type: 'run-finished', runId: 'r', prefix: P, time: 7 }));
    expect(f.summary()).toMatchObject({ running: false, start: 1, end: 7, counts: { succeeded: 1, 'dep-failed': 1 } });
    expect(f.steps[1]!.note).toBe('a failed');
  });

  it('a journal without a plan still shows every step it names, in order of first event', () => {
    const f = new RunFold('r', P);
    f.feed(step('x', 'cached', 1) + step('y', 'running', 2, { attempt: 1 }));
    expect(f.toJson().stepList.map((s) => [s.name, s.state])).toEqual([
      ['x', 'cached'],
      ['y', 'running'],
    ]);
    expect(f.changesSince(0).map((c) => c[5])).toEqual(['x', 'y']); // a viewer from the start gets the new steps' names
  });
});

describe('trace files', () => {
  const row = (name: string): TraceRow => ({ name, key: 'k', state: 'succeeded', attempts: 1, start: 1, end: 3, duration_ms: 2, cpu_ms: null, peak_memory_bytes: 10, memory_kind: 'rss', exit_code: 0 });
  it.each([
    [',', 'plain', 'plain,k,succeeded,1,1,3,2,,10,rss,0'],
    [',', 'a,"b"\nc', '"a,""b""\nc",k,succeeded,1,1,3,2,,10,rss,0'],
    ['\t', 'a\tb\nc', 'a b c\tk\tsucceeded\t1\t1\t3\t2\t\t10\trss\t0'],
  ] as const)('sep %j quotes %j', (sep, name, expected) => {
    const text = formatTrace([row(name)], sep);
    expect(text.startsWith(`name${sep}key${sep}state`)).toBe(true);
    expect(text.slice(text.indexOf('\n') + 1)).toBe(`${expected}\n`);
  });
});

describe('binds and tokens', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['localhost', true],
    ['::1', true],
    ['0.0.0.0', false],
    ['::', false],
    ['10.0.0.5', false],
    ['example.org', false],
  ])('%s is loopback: %s', (host, loopback) => expect(isLoopback(host)).toBe(loopback));

  it('tokens compare exactly', () => {
    expect(tokenMatches('abc', 'abc')).toBe(true);
    expect(tokenMatches('abd', 'abc')).toBe(false);
    expect(tokenMatches('ab', 'abc')).toBe(false);
    expect(tokenMatches(undefined, 'abc')).toBe(false);
  });
});
