/**
 * A running step's log, read while it runs, never shows a secret (built CLI, real processes): a
 * command step echoes HF_TOKEN split across two writes (its program writes its log file
 * directly); `cairn logs -f` and `cairn ui`'s log endpoint follow it. With the config's provider
 * they show it masked as it comes; with a config whose providers cannot resolve HF_TOKEN they
 * withhold the running attempt's lines with a notice, and show them masked once it ended.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cairnAsync, makeProject, waitFor } from './helpers/cli.js';

interface Log {
  attempt: number;
  lines: string[];
  live: boolean;
}

describe('secrets in a running log', () => {
  let project: ReturnType<typeof makeProject>;
  const token = `hf_${randomBytes(16).toString('hex')}`;
  const children: ReturnType<typeof cairnAsync>[] = [];
  beforeAll(() => {
    assertBuilt();
    project = makeProject(['live-secret.mjs']);
    mkdirSync(project.prefix);
    const vault = join(project.dir, 'vault.env');
    writeFileSync(vault, `HF_TOKEN=${token}\n`, { mode: 0o600 });
    writeFileSync(join(project.dir, 'cairn.config.mjs'), `export default { prefix: './store', secrets: { providers: [{ type: 'file', path: ${JSON.stringify(vault)} }] } };\n`);
    // Another reader: its providers do not have HF_TOKEN.
    writeFileSync(join(project.dir, 'reader.config.mjs'), `export default { prefix: './store', secrets: { providers: [{ type: 'env', prefix: 'CAIRN_TEST_NOWHERE_' }] } };\n`);
  });
  afterAll(async () => {
    for (const c of children) c.child.kill('SIGINT');
    await Promise.all(children.map((c) => c.done));
    project?.cleanup();
  }, 30_000);

  const start = (args: string[]) => {
    const c = cairnAsync(project.dir, args);
    children.push(c);
    return c;
  };
  const startUi = async (config: string) => {
    const ui = start(['--config', config, 'ui', '--port', '0']);
    await waitFor(ui.output, (o) => /Open http\S+/.test(o), 30_000);
    return /Open (http\S+)/.exec(ui.output())![1]!.replace(/\/$/, '');
  };
  const json = async <T>(url: string): Promise<T> => (await (await fetch(url)).json()) as T;

  it('cairn logs -f and the ui log endpoint mask it with the provider, withhold it without, and never print it', async () => {
    // An empty store each try: a retried test must not find the step its first try built.
    rmSync(project.prefix, { recursive: true, force: true });
    mkdirSync(project.prefix);
    const [withProvider, without] = await Promise.all([startUi('cairn.config.mjs'), startUi('reader.config.mjs')]);
    const run = start(['run', 'live-secret.mjs']);
    // The run's log URL, once the step runs.
    let logUrl: string | undefined;
    const until = Date.now() + 60_000;
    while (logUrl === undefined) {
      if (Date.now() > until) throw new Error(`the step did not start: ${run.output()}`);
      const runs = await json<{ runs: { runId: string }[] }>(`${withProvider}/api/runs`);
      const id = runs.runs[0]?.runId;
      if (id !== undefined) {
        const r = await json<{ stepList?: { name: string }[] }>(`${withProvider}/api/runs/${id}`);
        const i = r.stepList?.findIndex((s) => s.name === 'slowcmd') ?? -1;
        if (i >= 0 && (await json<Log>(`${withProvider}/api/runs/${id}/steps/${i}/log`)).live) logUrl = `/api/runs/${id}/steps/${i}/log`;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const follow = start(['logs', 'slowcmd', '-f']);
    const followWithout = start(['--config', 'reader.config.mjs', 'logs', 'slowcmd', '-f']);
    const seen: { with: Log[]; without: Log[] } = { with: [], without: [] };
    let ended = false;
    void run.done.then(() => (ended = true));
    while (!ended) {
      const [a, b] = await Promise.all([json<Log>(`${withProvider}${logUrl}`), json<Log>(`${without}${logUrl}`)]);
      seen.with.push(a);
      seen.without.push(b);
      await new Promise((r) => setTimeout(r, 150));
    }
    expect((await run.done).code, run.output()).toBe(0);
    const [f1, f2] = await Promise.all([follow.done, followWithout.done]);
    const after = { with: await json<Log>(`${withProvider}${logUrl}`), without: await json<Log>(`${without}${logUrl}`) };

    const printed = JSON.stringify({ seen, after, f1, f2, run: run.output() });
    expect(printed).not.toContain(token);
    // Live, with the provider: the lines as they come, masked.
    expect(seen.with.some((l) => l.live && l.lines.includes('got ***'))).toBe(true);
    expect(seen.with.some((l) => l.live && l.lines.includes('full ***') && !l.lines.includes('finished'))).toBe(true);
    // Live, without it: withheld, one notice naming the secret.
    const withheld = seen.without.filter((l) => l.live);
    expect(withheld.length).toBeGreaterThan(0);
    for (const l of withheld) expect(l.lines).toEqual([expect.stringMatching(/HF_TOKEN.*withheld/)]);
    // Ended: both show the masked log.
    for (const l of [after.with, after.without]) expect(l.lines).toEqual(expect.arrayContaining(['got ***', 'full ***', 'finished']));
    // cairn logs -f: masked as it came; the other reader a notice, then the masked log once the attempt ended.
    expect(f1.stdout).toContain('got ***\nfull ***\n');
    expect(f2.stdout).toMatch(/HF_TOKEN.*withheld/);
    expect(f2.stdout).toContain('got ***\nfull ***\nfinished');
  }, 120_000);
});
