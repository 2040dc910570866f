// Staged outputs and what a commit trusts: an attempt writes beside its output path and is
// renamed into place; an output being rebuilt is never half-visible; a SUCCESS whose record is
// missing, unreadable or another step's is not built, for every kind of step.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { apply, lower, OUT, StepSpec } from '@cairn/core';
import { StepRunner } from '../src/index.js';
import { leaseFile } from '../src/store/local/layout.js';
import { Graph, memoryLogger, tempDirs } from './helpers/graph.js';

const dir = tempDirs();
const cleanupsMoved: string[] = [];
afterAll(() => {
  for (const d of cleanupsMoved) rmSync(d, { recursive: true, force: true });
});

describe('staged outputs', () => {
  it('an attempt writes beside its output path; the commit renames it into place with its record and status', async () => {
    const prefix = dir();
    const seen: { out?: string; visible?: boolean; lease?: boolean } = {};
    const spec = new StepSpec({
      name: 'stage',
      fn: (out) => {
        writeFileSync(join(out, 'half'), 'x');
        seen.out = out;
        seen.visible = existsSync(spec.outputPath(prefix));
        seen.lease = existsSync(leaseFile(spec.outputPath(prefix)));
        return { file: join(out, 'half') };
      },
    });
    const summary = await new StepRunner({ prefix, logger: memoryLogger() }).run([spec]);
    const path = spec.outputPath(prefix);
    expect(seen.out).not.toBe(path);
    expect(seen.visible).toBe(false); // nothing half-written at the output path while it runs
    expect(seen.lease).toBe(true);
    expect(readdirSync(path).sort()).toEqual(['.artifact.json', '.executor_status', 'half']);
    expect(existsSync(seen.out as string)).toBe(false);
    expect(existsSync(leaseFile(path))).toBe(false);
    // A returned path inside the staged directory is recorded where it is after the commit.
    expect(summary.outcome(spec)?.result).toEqual({ file: join(path, 'half') });
    expect(JSON.parse(readFileSync(join(path, '.artifact.json'), 'utf8')).result).toEqual({ file: join(path, 'half') });
  });

  it('a dev step rebuilding over its old output: readers see the old output or the new one, never a mix', async () => {
    const prefix = dir();
    const path = () => lower(gen).outputPath(prefix);
    const observed = new Set<string>();
    let round = 0;
    const gen = apply({
      name: 'gen',
      version: 'dev',
      inputs: { out: OUT },
      fn: ({ out }: { out: string }) => {
        round++;
        // While this attempt writes, the published output is the previous round's, whole.
        for (const f of ['a', 'b']) {
          writeFileSync(join(out, f), String(round));
          if (existsSync(path())) observed.add(readdirSync(path()).filter((n) => !n.startsWith('.')).map((n) => `${n}=${readFileSync(join(path(), n), 'utf8')}`).join(','));
        }
      },
    });
    const r = new StepRunner({ prefix, logger: memoryLogger() });
    await r.run([gen]);
    await r.run([gen]);
    await r.run([gen]);
    expect([...observed].sort()).toEqual(['a=1,b=1', 'a=2,b=2']);
    expect(readFileSync(join(path(), 'a'), 'utf8')).toBe('3');
    expect(readdirSync(join(prefix, 'gen')).filter((n) => n.startsWith('.'))).toEqual([]); // no staged or aside directory left
  });

  it('a failed step keeps its logs and error at its output path; the retry starts in a clean directory', async () => {
    const prefix = dir();
    const dirs: string[] = [];
    let tries = 0;
    const spec = new StepSpec({
      name: 'flaky',
      retries: 1,
      fn: (out, ctx) => {
        dirs.push(out);
        ctx.log.info(`try ${++tries}: ${readdirSync(out).filter((n) => n !== '.cairn').join(',') || 'clean'}`);
        writeFileSync(join(out, 'partial'), String(tries));
        if (tries === 1) throw new Error('first try fails');
      },
    });
    await new StepRunner({ prefix, logger: memoryLogger() }).run([spec]);
    const path = spec.outputPath(prefix);
    expect(dirs[0]).not.toBe(dirs[1]);
    expect(readFileSync(join(path, '.cairn/logs/attempt-1.stdout'), 'utf8')).toMatch(/try 1: clean/);
    expect(readFileSync(join(path, '.cairn/logs/attempt-2.stdout'), 'utf8')).toMatch(/try 2: clean/);
    expect(readFileSync(join(path, 'partial'), 'utf8')).toBe('2');
  });
});

describe('records are checked for every kind of step', () => {
  const cases: [string, (path: string, nameWithHash: string) => void][] = [
    ['missing', (path) => rmSync(join(path, '.artifact.json'))],
    ['empty', (path) => writeFileSync(join(path, '.artifact.json'), '')],
    ['corrupt', (path) => writeFileSync(join(path, '.artifact.json'), '{"cairn": 1, "name"')],
    ['another step’s', (path) => writeFileSync(join(path, '.artifact.json'), JSON.stringify({ cairn: 1, name: 'other', nameWithHash: 'other-0000000000000000', outputPath: path }))],
    ['at another output path', (path, nameWithHash) => writeFileSync(join(path, '.artifact.json'), JSON.stringify({ cairn: 1, name: 'p', nameWithHash, outputPath: '/elsewhere/p-1111111111111111' }))],
  ];
  it.each(cases)('SUCCESS with a %s record is not built, with a warning', async (_what, spoil) => {
    const prefix = dir();
    const g = new Graph().step('p');
    const logger = memoryLogger();
    const r = new StepRunner({ prefix, logger });
    await r.run(g.pick('p'));
    spoil(g.get('p').outputPath(prefix), g.get('p').nameWithHash);
    await r.run(g.pick('p'));
    expect(g.calls).toEqual(['p', 'p']);
    expect(logger.lines.filter((l) => l.includes('treating it as not built'))).toHaveLength(1);
  });

  it('a store moved to another prefix stays valid', async () => {
    const first = dir();
    const g = new Graph().step('a').step('b', ['a']);
    await new StepRunner({ prefix: first, logger: memoryLogger() }).run(g.pick('b'));
    const moved = `${first}-moved`;
    renameSync(first, moved);
    cleanupsMoved.push(moved);
    await new StepRunner({ prefix: moved, logger: memoryLogger() }).run(g.pick('a', 'b'));
    expect(g.calls).toEqual(['a', 'b']);
  });
});

describe('links planted in the store', () => {
  it('a symbolic link at a step directory is refused, never written through', async () => {
    const prefix = dir();
    const outside = dir();
    const spec = new StepSpec({ name: 'victim', fn: (out) => writeFileSync(join(out, 'data'), 'x') });
    mkdirSync(prefix, { recursive: true });
    symlinkSync(outside, spec.outputPath(prefix));
    const err = (await new StepRunner({ prefix, logger: memoryLogger() }).run([spec]).catch((e: unknown) => e)) as { failures?: { error: { code?: string; message: string } }[] };
    expect(err.failures?.[0]?.error.code).toBe('CAIRN_UNSAFE_DIR');
    expect(readdirSync(outside)).toEqual([]);
  });

  it('a symbolic link on the way to a name/version step is refused before anything is written', async () => {
    const prefix = dir();
    const outside = dir();
    mkdirSync(prefix, { recursive: true });
    symlinkSync(outside, join(prefix, 'gen'));
    const h = apply({ name: 'gen', version: 'v1', fn: ({ out }: { out: string }) => writeFileSync(join(out, 'data'), 'x'), inputs: { out: OUT } });
    const err = (await new StepRunner({ prefix, logger: memoryLogger() }).run([h]).catch((e: unknown) => e)) as { failures?: { error: { code?: string } }[] };
    expect(err.failures?.[0]?.error.code).toBe('CAIRN_UNSAFE_DIR');
    expect(readdirSync(outside)).toEqual([]);
  });
});
