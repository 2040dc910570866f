/**
 * Secrets through the BUILT `cairn` binary on a REAL Slurm: `cairn.config.mjs` names a file
 * provider and a Slurm executor; `run` delivers HF_TOKEN to an `apply` step and a command step
 * (their outputs hold its hash), and neither the bytes `run`, `plan`, `status`, `logs`, `explain`
 * and `graph` print nor any file under the store holds the value (the steps' echoes are `***`);
 * nor does anything a real `cairn ui` server answers for that run (runs list, run DAG data, each
 * step's page data and log, the trace as JSON, CSV and TSV, the live stream, the page itself).
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { filesHolding } from '../../../tools/testenv/secret-leaks.js';
import { missingSlurmBinaries, startSlurm } from '../../../tools/testenv/slurm.js';
import { assertBuilt, cairn, cairnAsync, makeProject, waitFor } from './helpers/cli.js';

const skip = missingSlurmBinaries().length > 0 && !process.env.CI;
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

describe.skipIf(skip)('secrets through the cairn CLI on Slurm', () => {
  let slurm: Awaited<ReturnType<typeof startSlurm>>;
  let project: ReturnType<typeof makeProject>;
  const token = `hf_${randomBytes(16).toString('hex')}`;
  beforeAll(async () => {
    assertBuilt();
    slurm = await startSlurm({ rest: false });
    project = makeProject(['secret-pipeline.mjs'], { packages: ['core', 'runner', 'cli', 'grid', 'remote-slurm'] });
    const vault = join(project.dir, 'vault.env');
    writeFileSync(vault, `HF_TOKEN=${token}\n`, { mode: 0o600 });
    writeFileSync(
      join(project.dir, 'cairn.config.mjs'),
      `import { createSlurmExecutor } from '@cairn/remote-slurm';\nexport default { prefix: './store', secrets: { providers: [{ type: 'file', path: ${JSON.stringify(vault)} }] }, executors: { slurm: { use: createSlurmExecutor, options: { env: ${JSON.stringify(slurm.env)} } } } };\n`,
    );
  }, 120_000);
  afterAll(async () => {
    await slurm?.stop();
    project?.cleanup();
  });

  it('run delivers HF_TOKEN; nothing the CLI prints and no file in the store holds it', () => {
    const printed: string[] = [];
    const call = (args: string[]) => {
      const r = cairn(project.dir, args);
      printed.push(r.stdout, r.stderr);
      expect(r.code, `cairn ${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(0);
      return r;
    };
    call(['plan', 'secret-pipeline.mjs']);
    call(['run', 'secret-pipeline.mjs']);
    const store = join(project.dir, 'store');
    for (const step of ['fetch', 'cmd']) {
      const [out] = readdirSync(join(store, step)).filter((n) => /^v1-[0-9a-f]{16}$/.test(n));
      expect(readFileSync(join(store, step, out as string, 'hash'), 'utf8').trim(), step).toBe(sha(token));
    }
    call(['status', '--json']);
    call(['status', 'fetch', '--json']);
    expect(call(['logs', 'fetch']).stdout).toContain('fetch got ***');
    expect(call(['logs', 'cmd']).stdout).toContain('cmd got ***');
    call(['explain', 'fetch', 'secret-pipeline.mjs']);
    call(['graph', 'secret-pipeline.mjs', '--format', 'mermaid']);
    // The two HTML pages a user shares: the run's report and the graph coloured by the store.
    call(['report', '--out', 'report.html']);
    call(['graph', 'secret-pipeline.mjs', '--format', 'html', '--out', 'graph.html', '--prefix', './store']);
    const all = printed.join('\n');
    expect(all).toContain('HF_TOKEN');
    expect(all).not.toContain(token);
    expect(filesHolding([store, join(project.dir, 'report.html'), join(project.dir, 'graph.html')], token)).toEqual([]);
    expect(readFileSync(join(project.dir, 'report.html'), 'utf8')).toContain('fetch');
  }, 240_000);

  it('no cairn ui endpoint a user can open for the run holds it', async () => {
    const ui = cairnAsync(project.dir, ['ui', '--port', '0']);
    try {
      await waitFor(ui.output, (o) => /Open http\S+/.test(o), 30_000);
      const base = /Open (http\S+)/.exec(ui.output())![1]!.replace(/\/$/, '');
      const bodies: string[] = [];
      const get = async (path: string) => {
        const res = await fetch(`${base}${path}`);
        const text = await res.text();
        expect(res.status, `${path}: ${text}`).toBe(200);
        bodies.push(text);
        return text;
      };
      const runs = JSON.parse(await get('/api/runs')) as { runs: { runId: string }[] };
      const runId = runs.runs.find(() => true)?.runId as string;
      expect(runId).toBeDefined();
      await get('/api/info');
      await get('/');
      const run = JSON.parse(await get(`/api/runs/${runId}`)) as { stepList: { name: string }[] };
      expect(run.stepList.map((st) => st.name).sort()).toEqual(['cmd', 'fetch']);
      for (let i = 0; i < run.stepList.length; i++) {
        await get(`/api/runs/${runId}/steps/${i}`);
        await get(`/api/runs/${runId}/steps/${i}/log`);
        await get(`/api/runs/${runId}/steps/${i}/log?attempt=1`);
      }
      for (const t of ['trace', 'trace.csv', 'trace.tsv']) await get(`/api/runs/${runId}/${t}`);
      // The live stream: its first events (the runs list, the run's changes), read for a while.
      const stop = new AbortController();
      const res = await fetch(`${base}/api/stream?run=${runId}`, { signal: stop.signal });
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      let stream = '';
      const until = Date.now() + 2500;
      while (Date.now() < until && !stream.includes('event: changes')) {
        const { value, done } = await reader.read();
        if (done) break;
        stream += Buffer.from(value).toString('utf8');
      }
      stop.abort();
      bodies.push(stream);
      expect(stream).toContain('event: runs');
      const all = bodies.join('\n');
      expect(all).toContain('fetch got ***');
      expect(all).not.toContain(token);
    } finally {
      ui.child.kill('SIGINT');
      await ui.done;
    }
  }, 60_000);
});
