/**
 * A run made by a user's script (a StepRunner, no CLI) is listed by `cairn ui` and reported by
 * `cairn report` as a run of `cairn run` is: from the journal the runner writes, with its counts
 * (cache hits included, which step records alone cannot show). Runs the BUILT CLI and runner.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cairn, cairnAsync, cliEnv, makeProject, waitFor } from './helpers/cli.js';

let project: ReturnType<typeof makeProject>;
beforeAll(() => {
  assertBuilt();
  project = makeProject(['script-run.mjs'], { packageJson: { type: 'module' } });
});
afterAll(() => project?.cleanup());

describe('a run of a plain StepRunner script', () => {
  it('is listed by cairn ui with its counts, and cairn report shows its cache hits', async () => {
    const r = spawnSync(process.execPath, [join(project.dir, 'script-run.mjs'), project.prefix], { cwd: project.dir, env: cliEnv(), encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    const [first, second] = r.stdout.trim().split('\n');

    const ui = cairnAsync(project.dir, ['ui', '--prefix', project.prefix, '--port', '0']);
    try {
      await waitFor(ui.output, (o) => /Open http\S+/.test(o), 30_000);
      const url = /Open (http\S+)/.exec(ui.output())![1]!;
      const { runs } = (await (await fetch(`${url}api/runs`)).json()) as { runs: { runId: string; source: string; running: boolean; steps: number; counts: Record<string, number> }[] };
      const byId = new Map(runs.map((x) => [x.runId, x]));
      expect(byId.get(first!)).toMatchObject({ source: 'journal', running: false, steps: 3, counts: { succeeded: 3 } });
      // The second run built nothing: no record names it, only its journal.
      expect(byId.get(second!)).toMatchObject({ source: 'journal', running: false, steps: 3, counts: { cached: 1, pending: 2 } });
    } finally {
      ui.child.kill('SIGINT');
      await ui.done;
    }

    const report = cairn(project.dir, ['report', '--prefix', project.prefix, '--run', second!, '--out', 'report.html']);
    expect(report.code, report.stderr).toBe(0);
    const html = readFileSync(join(project.dir, 'report.html'), 'utf8');
    expect(html).toContain(second!);
    expect(html).toMatch(/cached/);
  }, 120_000);
});
