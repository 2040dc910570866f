/**
 * The Marin port of docs/from-marin.md (examples/marin/pipeline.ts) through the BUILT CLI: an
 * adopted corpus (nothing written into it), typed artifacts read with ctx.resolved() in-process
 * and on worker threads, a runtime argument that is not identity, the materialized config, and
 * Marin's calendar-version discipline.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cairn, makeProject } from './helpers/cli.js';

const REPO = join(import.meta.dirname, '..', '..', '..');
const EXAMPLE = join(REPO, 'examples', 'marin');
let project: ReturnType<typeof makeProject>;

/** Every file under `dir` with its size and mtime: what "nothing was written into it" compares. */
function listing(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(`${relative(dir, p)} ${statSync(p).size} ${statSync(p).mtimeMs}`);
    }
  };
  walk(dir);
  return out.sort();
}

beforeAll(() => {
  assertBuilt();
  project = makeProject([]);
  cpSync(EXAMPLE, project.dir, { recursive: true });
  cpSync(join(project.dir, 'corpus'), join(project.dir, 'public-corpus'), { recursive: true });
});
afterAll(() => project?.cleanup());

const env = () => ({ MARIN_EXAMPLE_CORPUS: join(project.dir, 'public-corpus') });

function runJson(prefix: string, ...args: string[]) {
  const r = cairn(project.dir, ['run', 'pipeline.ts', '--prefix', prefix, '--json', ...args], env());
  const lines = r.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { type: string; [k: string]: unknown });
  const ran = lines.filter((e) => e.type === 'step' && e.state === 'succeeded').map((e) => e.step as string).sort();
  return { code: r.code, stderr: r.stderr, ran, lines };
}

describe('examples/marin: the Marin port', () => {
  it('type-checks (the examples tsconfig covers it)', () => {
    const tsc = spawnSync(process.execPath, [join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(REPO, 'examples', 'tsconfig.json')], { encoding: 'utf8' });
    expect(tsc.status, tsc.stdout + tsc.stderr).toBe(0);
  }, 120_000); // a whole tsc run: 15 s alone, past 30 s on a loaded 2-core machine

  it('runs end to end, reads the adopted corpus without writing into it, and reruns fully cached', () => {
    const before = listing(join(project.dir, 'public-corpus'));
    const prefix = join(project.dir, 'store');
    const first = runJson(prefix);
    expect(first.code, first.stderr).toBe(0);
    expect(first.ran).toEqual(['corpus', 'eval', 'model', 'tokens']);
    expect(listing(join(project.dir, 'public-corpus'))).toEqual(before);
    const status = JSON.parse(cairn(project.dir, ['status', 'eval', '--prefix', prefix, '--json'], env()).stdout);
    expect(status.record.result.perplexity).toBeGreaterThan(1);
    const report = readFileSync(join(status.path, 'report.txt'), 'utf8');
    expect(report).toMatch(/^perplexity \d+\.\d{4} over \d+ tokens\n$/);
    expect(runJson(prefix).ran).toEqual([]);
  });

  it('on worker threads, ctx.resolved loads the typed dependencies there, with the same result', () => {
    const r = runJson(join(project.dir, 'store-threads'), '--executor', 'threads');
    expect(r.code, r.stderr).toBe(0);
    expect(r.ran).toEqual(['corpus', 'eval', 'model', 'tokens']);
    const a = JSON.parse(cairn(project.dir, ['status', 'eval', '--prefix', join(project.dir, 'store'), '--json'], env()).stdout);
    const b = JSON.parse(cairn(project.dir, ['status', 'eval', '--prefix', join(project.dir, 'store-threads'), '--json'], env()).stdout);
    expect(b.record.result).toEqual(a.record.result);
  });

  it('explain --config shows what train receives: the tokens path and the runtime argument', () => {
    const prefix = join(project.dir, 'store');
    const r = cairn(project.dir, ['explain', 'model', 'pipeline.ts', '--prefix', prefix, '--config', '--json'], env());
    expect(r.code, r.stderr).toBe(0);
    const m = JSON.parse(r.stdout);
    expect(m.config).toMatchObject({ smoothing: 0.5, workers: 4, tokens: expect.stringMatching(/\/tokens\/2026\.11\.30-[0-9a-f]{16}$/) });
    expect(m.runtime).toEqual({ workers: 4 });
  });

  it('a missing corpus fails the run before anything that depends on it starts', () => {
    const prefix = join(project.dir, 'store-missing');
    const r = cairn(project.dir, ['run', 'pipeline.ts', '--prefix', prefix, '--json'], { MARIN_EXAMPLE_CORPUS: join(project.dir, 'no-such-corpus') });
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toMatch(/CAIRN_ADOPT_MISSING/);
    const started = r.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((e) => e.type === 'step' && e.state === 'running').map((e) => e.step);
    expect(started.filter((s: string) => s !== 'corpus')).toEqual([]);
  });

  it("passes Marin's calendar-version rule", () => {
    const r = cairn(project.dir, ['plan', 'pipeline.ts', '--prefix', join(project.dir, 'store'), '--json'], env());
    expect(r.code, r.stderr).toBe(0);
    const calendar = join(project.dir, 'store-calendar');
    writeFileSync(join(project.dir, 'cairn.config.mjs'), "export default { versions: 'calendar' };\n");
    try {
      expect(runJson(calendar).code).toBe(0);
    } finally {
      rmSync(join(project.dir, 'cairn.config.mjs'));
    }
  });
});
