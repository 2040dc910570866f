/**
 * `cairn status` and `cairn clean` with checkpoint directories and preempted attempts, on the
 * BUILT binary (`node dist/bin.js`): a command step preempted twice (fixtures/preempted.mjs)
 * ends FAILED with its checkpoints kept for a rerun to resume from.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cairn, makeProject } from './helpers/cli.js';

let cleanups: (() => void)[] = [];
beforeAll(() => assertBuilt());
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** A project whose train step was preempted twice and failed, and its checkpoint directory. */
function preemptedProject(): { dir: string; prefix: string; checkpoints: () => string } {
  const p = makeProject(['preempted.mjs']);
  cleanups.push(p.cleanup);
  const r = cairn(p.dir, ['run', 'preempted.mjs', '--prefix', p.prefix]);
  expect(r.code, r.stderr).toBe(1);
  const checkpoints = () => {
    const parent = join(p.prefix, 'train');
    const root = readdirSync(parent).find((n) => n.endsWith('.cairn-checkpoints'));
    return root === undefined ? '' : join(parent, root);
  };
  return { dir: p.dir, prefix: p.prefix, checkpoints };
}

describe('checkpoints in the CLI', () => {
  it('status shows the preempted attempts and the checkpoint generation and size', () => {
    const { dir, prefix } = preemptedProject();
    const json = JSON.parse(cairn(dir, ['status', '--prefix', prefix, '--json']).stdout) as { steps: { status: string; attempts: number; preempted: number; checkpoints: { generation: number; files: number; bytes: number } | null }[] };
    expect(json.steps).toHaveLength(1);
    expect(json.steps[0]).toMatchObject({ status: 'FAILED', attempts: 2, preempted: 2, checkpoints: { generation: 1, files: 2, bytes: 16 } });
    const text = cairn(dir, ['status', '--prefix', prefix]).stdout;
    expect(text).toContain('2 (2 preempted)');
    expect(text).toMatch(/checkpoints gen 1: 2 files, 16 B/);
  }, 120_000);

  it('clean removes a failed output with its checkpoints; --keep-checkpoints keeps them', () => {
    const { dir, prefix, checkpoints } = preemptedProject();
    const root = checkpoints();
    expect(existsSync(root)).toBe(true);
    const dry = cairn(dir, ['clean', '--prefix', prefix]).stdout;
    expect(dry).toMatch(/would remove train\/\.v1-[0-9a-f]{16}\.cairn-checkpoints \(checkpoints\)/);
    cairn(dir, ['clean', '--prefix', prefix, '--yes', '--keep-checkpoints']);
    expect(existsSync(root)).toBe(true);
    expect(readdirSync(join(prefix, 'train')).filter((n) => /^v1-/.test(n))).toEqual([]);
    // Failed again: this time clean takes the checkpoints too.
    expect(cairn(dir, ['run', 'preempted.mjs', '--prefix', prefix]).code).toBe(1);
    cairn(dir, ['clean', '--prefix', prefix, '--yes']);
    expect(existsSync(root)).toBe(false);
  }, 120_000);
});
