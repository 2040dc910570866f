/**
 * Issue 16's README scenario through the BUILT CLI, on a copy of `examples/`: a config change
 * upstream of a built terminal (`smoothing: 0.5` -> `5` in `model`) is planned with its reason
 * and rebuilds exactly the changed step and its dependents; `--rebuild` forces a step and what is
 * downstream; the 'versioned' layout refuses drift until it is accepted.
 */
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cairn, makeProject } from './helpers/cli.js';

const EXAMPLES = join(import.meta.dirname, '..', '..', '..', 'examples');
let project: ReturnType<typeof makeProject>;

beforeAll(() => {
  assertBuilt();
  project = makeProject([]);
  for (const f of ['pipeline.ts', 'steps.ts']) copyFileSync(join(EXAMPLES, f), join(project.dir, f));
});
afterAll(() => project?.cleanup());

const setSmoothing = (value: string) => {
  const file = join(project.dir, 'pipeline.ts');
  writeFileSync(file, readFileSync(file, 'utf8').replace(/smoothing: [0-9.]+/, `smoothing: ${value}`));
};

/** Runs with JSON events; the names of the steps that ran (succeeded), and the exit code. */
function run(prefix: string, ...args: string[]): { code: number | null; ran: string[]; lines: { type: string; [k: string]: unknown }[] } {
  const r = cairn(project.dir, ['run', 'pipeline.ts', '--prefix', prefix, '--json', ...args]);
  const lines = r.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { type: string; [k: string]: unknown });
  const ran = lines.filter((e) => e.type === 'step' && e.state === 'succeeded').map((e) => e.step as string);
  return { code: r.code, ran: ran.sort(), lines };
}

function plan(prefix: string, ...args: string[]): Record<string, { state: string; reason: string }> {
  const r = cairn(project.dir, ['plan', 'pipeline.ts', '--prefix', prefix, '--json', ...args]);
  expect(r.code, r.stderr).toBe(0);
  return Object.fromEntries((JSON.parse(r.stdout).steps as { name: string; state: string; reason: string }[]).map((s) => [s.name, { state: s.state, reason: s.reason }]));
}

describe('the README scenario (content-addressed, the default)', () => {
  const prefix = () => join(project.dir, 'store');

  it('a config change upstream of a built terminal: plan says what and why, run rebuilds exactly those, a rerun nothing', () => {
    setSmoothing('0.5');
    expect(run(prefix()).ran).toEqual(['corpus', 'eval', 'model', 'tokens', 'vocab']);
    setSmoothing('5');
    const p = plan(prefix());
    expect(Object.fromEntries(Object.entries(p).map(([k, v]) => [k, v.state]))).toEqual({ corpus: 'not-examined', vocab: 'not-examined', tokens: 'cached', model: 'run', eval: 'run' });
    expect(p.model?.reason).toMatch(/^changed since the last build: smoothing: 0\.5 -> 5 \(last build: .*\/model\/2026\.11\.30-[0-9a-f]{16}\)$/);
    expect(p.eval?.reason).toMatch(/^changed since the last build: dependency model@2026\.11\.30 changed/);
    const text = cairn(project.dir, ['plan', 'pipeline.ts', '--prefix', prefix()]).stdout;
    expect(text).toMatch(/model\s+[0-9a-f]{8}\s+will run\s+changed since the last build: smoothing: 0\.5 -> 5/);
    expect(text).toMatch(/corpus\s+[0-9a-f]{8}\s+cached \(not examined\)/);
    const explain = cairn(project.dir, ['explain', 'eval', 'pipeline.ts', '--prefix', prefix()]).stdout;
    expect(explain).toContain('will run: changed since the last build: dependency model@2026.11.30 changed');
    expect(run(prefix()).ran).toEqual(['eval', 'model']);
    const again = run(prefix());
    expect(again.ran).toEqual([]);
    expect(again.lines.at(-1)).toMatchObject({ type: 'summary', exitCode: 0, counts: { cached: 1 } });
    expect(cairn(project.dir, ['explain', 'eval', 'pipeline.ts', '--prefix', prefix()]).stdout).toContain('cached: the stored output is current');
  });

  it('plan and graph take targets; --rebuild STEP reruns exactly it and what is downstream', () => {
    expect(Object.keys(plan(prefix(), 'tokens'))).toEqual(['corpus', 'vocab', 'tokens']);
    const graph = cairn(project.dir, ['graph', 'pipeline.ts', 'model', '--prefix', prefix(), '--format', 'mermaid']);
    expect(graph.code, graph.stderr).toBe(0);
    expect(graph.stdout).not.toContain('eval');
    expect(Object.fromEntries(Object.entries(plan(prefix(), '--rebuild', 'tokens')).map(([k, v]) => [k, v.state]))).toMatchObject({ tokens: 'run', model: 'run', eval: 'run' });
    expect(run(prefix(), '--rebuild', 'tokens').ran).toEqual(['eval', 'model', 'tokens']);
    expect(run(prefix(), '--rebuild-all').ran).toEqual(['corpus', 'eval', 'model', 'tokens', 'vocab']);
    const typo = cairn(project.dir, ['run', 'pipeline.ts', '--prefix', prefix(), '--rebuild', 'modle']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('No step in the pipeline matches "modle"');
  });
});

describe("layout: 'versioned' (Marin's fixed paths)", () => {
  const prefix = () => join(project.dir, 'versioned-store');
  beforeAll(() => writeFileSync(join(project.dir, 'cairn.config.mjs'), "export default { layout: 'versioned' };\n"));
  afterAll(() => writeFileSync(join(project.dir, 'cairn.config.mjs'), 'export default {};\n'));

  it('a drifted built ancestor under a built target is an error with the diff and the fixes; --accept-drift serves it', () => {
    setSmoothing('0.5');
    expect(run(prefix()).ran).toHaveLength(5);
    setSmoothing('5');
    const p = plan(prefix());
    expect([p.model?.state, p.eval?.state]).toEqual(['drifted', 'drifted']);
    const failed = cairn(project.dir, ['run', 'pipeline.ts', '--prefix', prefix()]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('2 step(s) failed');
    expect(failed.stderr).toContain('model: Step "model@2026.11.30" lives at a fixed path');
    // The whole message, under the step's name: the diff and the fixes.
    expect(failed.stderr).toMatch(/model: Step "model@2026\.11\.30" lives at a fixed path \(the 'versioned' layout\), and its output at .* was built from another recipe than it has now:\n\s+smoothing: 0\.5 -> 5\n\s+It is not served\. Either bump the version of "model"/);
    expect(failed.stderr).toMatch(/eval: .*\n\s+dependency model@2026\.11\.30 changed/);
    const accepted = run(prefix(), '--accept-drift');
    expect(accepted.code).toBe(0);
    expect(accepted.ran).toEqual([]);
    expect(run(prefix(), '--rebuild', 'model').ran).toEqual(['eval', 'model']);
    expect(plan(prefix()).eval?.state).toBe('cached');
  });
});

describe("versions: 'calendar' in the config file", () => {
  afterAll(() => writeFileSync(join(project.dir, 'cairn.config.mjs'), 'export default {};\n'));

  it("passes the example's calendar versions and refuses another with the step and the fix; a bad rule is one config error", () => {
    writeFileSync(join(project.dir, 'cairn.config.mjs'), "export default { versions: 'calendar' };\n");
    expect(cairn(project.dir, ['config', '--json']).stdout).toMatch(/"versions": "calendar"/);
    const prefix = join(project.dir, 'calendar-store');
    expect(run(prefix).code).toBe(0);
    const file = join(project.dir, 'pipeline.ts');
    const before = readFileSync(file, 'utf8');
    writeFileSync(file, before.replace("name: 'eval', fn: evaluate, version: '2026.11.30'", "name: 'eval', fn: evaluate, version: 'v2'"));
    try {
      const refused = cairn(project.dir, ['run', 'pipeline.ts', '--prefix', prefix]);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(/CAIRN_BAD_VERSION/);
      expect(refused.stderr).toMatch(/Step "eval": version "v2" is not a calendar version/);
    } finally {
      writeFileSync(file, before);
    }
    writeFileSync(join(project.dir, 'cairn.config.mjs'), "export default { versions: 'strict' };\n");
    const bad = cairn(project.dir, ['config']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/versions must be "free" or "calendar", got "strict"/);
  });
});
