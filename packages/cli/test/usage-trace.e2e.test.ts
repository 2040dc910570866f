/**
 * `cairn report --trace` and `cairn status <step>` show what each attempt used: a process step
 * whose child holds ~200 MB and burns ~1 s of CPU, and the same program as a command step on
 * threads, with GPU numbers from a fake nvidia-smi on PATH.
 */
import { readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cairn, makeProject, REPO_DIR } from './helpers/cli.js';
import { writeFakeNvidiaSmi } from '../../../tools/testenv/fake-nvidia-smi.js';

const MB = 2 ** 20;
let project: ReturnType<typeof makeProject>;
let env: Record<string, string>;
beforeAll(() => {
  assertBuilt();
  project = makeProject(['usage.mjs']);
  const bin = writeFakeNvidiaSmi(project.dir, { marker: 'cairn-usage-hog', usedMiB: 2048, utilization: 63 });
  env = { HOG: join(REPO_DIR, 'tools', 'testenv', 'usage-hog.mjs'), PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` };
});
afterAll(() => project.cleanup());

describe('usage in the report and the trace', () => {
  it('the trace has one row per attempt with tree CPU, peak RSS and the GPU numbers; status shows them', () => {
    const r = cairn(project.dir, ['run', 'usage.mjs', '--prefix', project.prefix], env);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const tracePath = join(project.dir, 'trace.tsv');
    const rep = cairn(project.dir, ['report', '--prefix', project.prefix, '--trace', tracePath]);
    expect(rep.code, rep.stderr).toBe(0);
    expect(rep.stdout).toContain('2 attempt(s) (TSV)');
    const [head, ...lines] = readFileSync(tracePath, 'utf8').trim().split('\n').map((l) => l.split('\t'));
    const rows = lines.map((l) => Object.fromEntries(head!.map((h, i) => [h, l[i]!])));
    expect(rows.map((x) => x.name).sort()).toEqual(['hog-cmd', 'hog-fn']);
    for (const row of rows) {
      expect(row).toMatchObject({ status: 'succeeded', cpu_scope: 'tree', memory: 'rss:tree', gpu_peak_mem_bytes: String(2048 * MB), '%gpu': '63', exit: '0' });
      expect(Number(row.cpu_ms)).toBeGreaterThanOrEqual(500);
      expect(Number(row.peak_rss_bytes)).toBeGreaterThanOrEqual(150 * MB);
    }
    const csv = cairn(project.dir, ['report', '--prefix', project.prefix, '--trace', join(project.dir, 'trace.csv')]);
    expect(csv.code, csv.stderr).toBe(0);
    expect(readFileSync(join(project.dir, 'trace.csv'), 'utf8').split('\n')[0]).toMatch(/^task_id,name,key,attempt,/);
    const st = cairn(project.dir, ['status', 'hog-fn', '--prefix', project.prefix]);
    expect(st.code, st.stderr).toBe(0);
    expect(st.stdout).toMatch(/cpu \d[\d.]*\s*s/);
    expect(st.stdout).toMatch(/peak rss \d+ MiB/);
    expect(st.stdout).toContain('gpu 2.0 GiB 63%');
  }, 120_000);
});
