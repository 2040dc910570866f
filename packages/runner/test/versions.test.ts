/**
 * Versions (issue 20): a version is mutable exactly when it is `dev` or ends in `-dev`, as in
 * Marin; `versions: 'calendar'` enforces Marin's calendar versions before anything runs.
 */
import { describe, expect, it } from 'vitest';
import { apply, hasCode, isCalendarVersion, isMutableVersion, lower } from '@cairn/core';
import { StepRunner } from '../src/index.js';
import { memoryLogger, tempDirs } from './helpers/graph.js';
import { rejection, thrown } from './helpers/thrown.js';

const dir = tempDirs();

describe('mutable versions', () => {
  it('are dev and …-dev only', () => {
    for (const v of ['dev', 'exp-dev', '2026.12.01-dev']) expect(isMutableVersion(v), v).toBe(true);
    for (const v of ['undev', '2026dev', 'v3dev', 'devel', 'dev-1', 'DEV']) expect(isMutableVersion(v), v).toBe(false);
  });

  it('an "undev" step is cached like any other; a "-dev" one reruns every time', async () => {
    const calls: string[] = [];
    const a = apply({ name: 'a', version: 'undev', inputs: {}, fn: () => void calls.push('a') });
    const b = apply({ name: 'b', version: 'exp-dev', inputs: {}, fn: () => void calls.push('b') });
    const runner = new StepRunner({ prefix: dir(), logger: memoryLogger() });
    await runner.run([lower(a), lower(b)]);
    await runner.run([lower(a), lower(b)]);
    expect(calls).toEqual(['a', 'b', 'b']);
  });

  it('a fixed version may depend on "undev" (it is not mutable), not on "dev"', () => {
    const ok = apply({ name: 'up', version: 'undev', inputs: {}, fn: () => 1 });
    expect(() => lower(apply({ name: 'down', version: 'v1', inputs: { ok }, fn: () => 1 }))).not.toThrow();
    const dev = apply({ name: 'up2', version: 'dev', inputs: {}, fn: () => 1 });
    const err = thrown(() => lower(apply({ name: 'down2', version: 'v1', inputs: { dev }, fn: () => 1 })));
    expect(hasCode(err, 'CAIRN_MUTABLE_DEPENDENCY')).toBe(true);
  });
});

describe("versions: 'calendar'", () => {
  it('takes YYYY.MM.DD[.N], dev and …-dev', () => {
    for (const v of ['2026.12.01', '2026.12.01.3', 'dev', '2026.12.01-dev', '2026.02.29']) expect(isCalendarVersion(v), v).toBe(true);
    for (const v of ['v1', '2026.13.01', '2026.12.32', '2026.1.1', '26.12.01', '2026-12-01', 'x-dev', 'undev', '2026.12.01.']) expect(isCalendarVersion(v), v).toBe(false);
  });

  it('refuses a run with another version before anything runs, naming the step and the fix', async () => {
    const calls: string[] = [];
    const good = apply({ name: 'good', version: '2026.12.01', inputs: {}, fn: () => void calls.push('good') });
    const bad = apply({ name: 'tokenize', version: 'v2', inputs: { good }, fn: () => void calls.push('bad') });
    const runner = new StepRunner({ prefix: dir(), versions: 'calendar', logger: memoryLogger() });
    const err = await rejection(runner.run([lower(bad)]));
    expect(hasCode(err, 'CAIRN_BAD_VERSION')).toBe(true);
    expect((err as Error).message).toMatch(/Step "tokenize": version "v2" is not a calendar version.*YYYY\.MM\.DD/);
    expect(calls).toEqual([]);
    // The default takes it.
    await new StepRunner({ prefix: dir(), logger: memoryLogger() }).run([lower(bad)]);
    expect(calls).toEqual(['good', 'bad']);
  });

  it('passes calendar and dev versions', async () => {
    const calls: string[] = [];
    const a = apply({ name: 'a', version: '2026.12.01.2', inputs: {}, fn: () => void calls.push('a') });
    const b = apply({ name: 'b', version: '2026.12.01-dev', inputs: { a }, fn: () => void calls.push('b') });
    await new StepRunner({ prefix: dir(), versions: 'calendar', logger: memoryLogger() }).run([lower(b)]);
    expect(calls).toEqual(['a', 'b']);
  });

  it('a bad rule is a CAIRN_CONFIG naming the choices', async () => {
    const err = thrown(() => new StepRunner({ prefix: dir(), versions: 'strict' as never }));
    expect(hasCode(err, 'CAIRN_CONFIG')).toBe(true);
    expect((err as Error).message).toMatch(/versions.*"free".*"calendar"/);
  });
});

describe('one name@version, two recipes', () => {
  it('lowered in separate calls onto one fixed path: one CAIRN_DUPLICATE_STEP naming both, nothing runs', async () => {
    const calls: string[] = [];
    const a1 = lower(apply({ name: 'feat', version: '2026.12.01', layout: 'versioned', inputs: { k: 1 }, fn: () => void calls.push('k1') }));
    const a2 = lower(apply({ name: 'feat', version: '2026.12.01', layout: 'versioned', inputs: { k: 2 }, fn: () => void calls.push('k2') }));
    const err = await rejection(new StepRunner({ prefix: dir(), logger: memoryLogger() }).run([a1, a2]));
    expect(hasCode(err, 'CAIRN_DUPLICATE_STEP')).toBe(true);
    expect((err as Error).message).toContain(a1.nameWithHash);
    expect((err as Error).message).toContain(a2.nameWithHash);
    expect(calls).toEqual([]);
  });

  it('content-addressed, they are two steps at two paths', async () => {
    const calls: string[] = [];
    const a1 = lower(apply({ name: 'feat', version: '2026.12.01', inputs: { k: 1 }, fn: () => void calls.push('k1') }));
    const a2 = lower(apply({ name: 'feat', version: '2026.12.01', inputs: { k: 2 }, fn: () => void calls.push('k2') }));
    await new StepRunner({ prefix: dir(), logger: memoryLogger() }).run([a1, a2]);
    expect(calls.sort()).toEqual(['k1', 'k2']);
  });
});
