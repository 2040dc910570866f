import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, afterEach, describe, expect, it } from 'vitest';
import { StepSpec } from '@cairn/core';
import { leaseFile } from '../src/store/local/layout.js';
import { tempDir } from './helpers/graph.js';

// These tests run runners in child processes, which import the built dist/ of @cairn/core and @cairn/runner.
const pkg = fileURLToPath(new URL('..', import.meta.url));
const fixture = join(pkg, 'test/fixtures/runner-child.mjs');

beforeAll(() => {
  if (!existsSync(join(pkg, 'dist/index.js'))) execFileSync('npx', ['tsup'], { cwd: pkg, stdio: 'ignore' });
  if (!existsSync(join(pkg, '../core/dist/index.js'))) execFileSync('npx', ['tsup'], { cwd: join(pkg, '../core'), stdio: 'ignore' });
}, 120_000);

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

function child(mode: string, prefix: string, work: string): { proc: ChildProcess; done: Promise<{ code: number | null; signal: string | null; out: string }> } {
  const proc = spawn(process.execPath, [fixture, mode, prefix, work], { stdio: ['ignore', 'pipe', 'pipe'] });
  cleanups.push(() => proc.kill('SIGKILL'));
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const done = new Promise<{ code: number | null; signal: string | null; out: string }>((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal, out })));
  return { proc, done };
}
async function until(cond: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}
const read = (f: string) => (existsSync(f) ? readFileSync(f, 'utf8') : '');
// Paths as the fixture computes them (same specs, same identity).
const chainPath = (prefix: string, i: number) => {
  const specs: StepSpec[] = [];
  for (let k = 0; k <= i; k++) specs.push(new StepSpec({ name: `c${k}`, hashAttrs: { i: k }, deps: k ? [specs[k - 1] as StepSpec] : [] }));
  return (specs[i] as StepSpec).outputPath(prefix);
};

describe('runners in separate processes', () => {
  it('two runners started at once on one store run each shared step exactly once', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const prefix = join(t.dir, 'store');
    const a = child('shared', prefix, t.dir);
    const b = child('shared', prefix, t.dir);
    const [ra, rb] = await Promise.all([a.done, b.done]);
    expect(ra.code).toBe(0);
    expect(rb.code).toBe(0);
    expect(JSON.parse(ra.out).ok).toBe(true);
    expect(JSON.parse(rb.out).ok).toBe(true);
    for (const name of ['root', 'm0', 'm1', 'm2', 'm3', 'top']) expect(read(join(t.dir, `count-${name}`))).toBe('x');
  });

  it('after kill -9 mid-run, a rerun never reruns a SUCCESS step and never marks partial output SUCCESS', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const prefix = join(t.dir, 'store');
    const first = child('chain', prefix, t.dir);
    await until(() => existsSync(join(t.dir, 'start-c2')));
    first.proc.kill('SIGKILL');
    const r1 = await first.done;
    expect(r1.signal).toBe('SIGKILL');
    const status = (i: number) => read(join(chainPath(prefix, i), '.executor_status'));
    for (let i = 0; i < 5; i++) {
      if (status(i) === 'SUCCESS') expect(read(join(chainPath(prefix, i), 'data'))).toBe('complete');
    }
    expect(status(0)).toBe('SUCCESS');
    expect(status(2)).not.toBe('SUCCESS');
    expect(existsSync(leaseFile(chainPath(prefix, 2)))).toBe(true); // the dead runner's lease
    const succeededBefore = [0, 1, 2, 3, 4].filter((i) => status(i) === 'SUCCESS');
    const second = child('chain', prefix, t.dir);
    const r2 = await second.done;
    expect(JSON.parse(r2.out)).toMatchObject({ ok: true });
    for (const i of succeededBefore) expect(read(join(t.dir, `start-c${i}`))).toBe('x');
    expect(read(join(t.dir, 'start-c2'))).toBe('xx');
    for (let i = 0; i < 5; i++) {
      expect(status(i)).toBe('SUCCESS');
      expect(read(join(chainPath(prefix, i), 'data'))).toBe('complete');
    }
  });

  it('SIGINT cancels the running step, records CANCELLED, and the process ends by itself', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const prefix = join(t.dir, 'store');
    const c = child('sigint', prefix, t.dir);
    await until(() => existsSync(join(t.dir, 'started-long')));
    c.proc.kill('SIGINT');
    const r = await c.done;
    expect(r.code).toBe(0);
    expect(r.out).toContain('"code":"CAIRN_CANCELLED"');
    const path = new StepSpec({ name: 'long' }).outputPath(prefix);
    expect(read(join(path, '.executor_status'))).toBe('CANCELLED');
    expect(existsSync(leaseFile(path))).toBe(false);
  });
});
