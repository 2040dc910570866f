/**
 * Loading pipelines and config files as a new user would: TypeScript on the `threads`
 * executor, a default (CommonJS) `npm init -y` project, and load failures that show their
 * first real error without `--verbose`. Runs the BUILT binary.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cairn, makeProject, REPO_DIR } from './helpers/cli.js';

/** What `npm init -y` (npm 11) writes. */
const NPM_INIT = { name: 'fresh', version: '1.0.0', description: '', main: 'index.js', scripts: { test: 'echo "Error: no test specified" && exit 1' }, keywords: [], author: '', license: 'ISC', type: 'commonjs' };

const STEPS_TS = `import { writeFile } from 'node:fs/promises';
import { defineStep } from '@cairn/core';

export const greet = defineStep(import.meta.url, 'greet', async ({ who, out }: { who: string; out: string }) => {
  await writeFile(\`\${out}/greeting.txt\`, \`hello \${who}\`);
  return { who };
});
`;

const PIPELINE_TLA = `import { apply, OUT } from '@cairn/core';
import { greet } from './steps';

// Top-level await: a syntax error once a .ts file is compiled to CommonJS.
const who = await Promise.resolve('world');
export const targets = [apply({ name: 'greet', fn: greet, version: 'v1', inputs: { who, out: OUT } })];
`;

/** The `cairn.config.ts` example of packages/cli/README.md, verbatim. */
function readmeConfig(): string {
  const readme = readFileSync(join(REPO_DIR, 'packages/cli/README.md'), 'utf8');
  const m = /```ts\n(\/\/ cairn\.config\.ts\n[\s\S]*?)```/.exec(readme);
  if (!m) throw new Error('packages/cli/README.md has no cairn.config.ts example');
  return m[1] as string;
}

beforeAll(() => assertBuilt());

describe('the threads executor runs TypeScript steps', () => {
  let prefix: string;
  beforeAll(() => (prefix = mkdtempSync(join(tmpdir(), 'cairn-threads-'))));
  afterAll(() => rmSync(prefix, { recursive: true, force: true }));

  it('runs the README example pipeline (examples/pipeline.ts) on threads and on processes', () => {
    const r = cairn(REPO_DIR, ['run', 'examples/pipeline.ts', '--executor', 'threads', '--prefix', join(prefix, 'threads')]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('5 succeeded');
    const status = JSON.parse(cairn(REPO_DIR, ['status', '--json', '--prefix', join(prefix, 'threads')]).stdout);
    expect(status.steps.map((s: { executor: string }) => s.executor)).toEqual(['threads', 'threads', 'threads', 'threads', 'threads']);
    const p = cairn(REPO_DIR, ['run', 'examples/pipeline.ts', '--executor', 'process', '--prefix', join(prefix, 'process')]);
    expect(p.code, p.stdout + p.stderr).toBe(0);
  });

  it("carries an import failure's cause into the step's error, `cairn logs` and `cairn status <step>`", () => {
    const project = makeProject(['gpu.ts', 'gpu-steps.ts']);
    try {
      const r = cairn(project.dir, ['run', 'gpu.ts', '--prefix', project.prefix]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('cannot import');
      expect(r.stderr).toContain('libcuda.so.1: cannot open shared object file');
      const logs = cairn(project.dir, ['logs', 'gpu-train', '--prefix', project.prefix]);
      expect(logs.code, logs.stderr).toBe(0);
      expect(logs.stdout).toContain('--- attempt 1 failed on threads');
      expect(logs.stdout).toContain('Caused by: Error: libcuda.so.1');
      expect(logs.stdout).toMatch(/gpu-steps\.ts:\d+:\d+/); // where the cause was thrown
      const status = cairn(project.dir, ['status', 'gpu-train', '--prefix', project.prefix]);
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toContain('libcuda.so.1');
    } finally {
      project.cleanup();
    }
  });
});

describe('a default (CommonJS) project from `npm init -y`', () => {
  let project: ReturnType<typeof makeProject>;
  beforeAll(() => {
    project = makeProject([], { packages: ['core', 'runner', 'cli', 'remote-ssh'], packageJson: NPM_INIT });
    writeFileSync(join(project.dir, 'steps.ts'), STEPS_TS);
    writeFileSync(join(project.dir, 'pipeline.ts'), PIPELINE_TLA);
  });
  afterAll(() => project?.cleanup());

  it("reads the CLI README's cairn.config.ts as written", () => {
    writeFileSync(join(project.dir, 'cairn.config.ts'), readmeConfig());
    try {
      const r = cairn(project.dir, ['config', '--json']);
      expect(r.code, r.stderr).toBe(0);
      const view = JSON.parse(r.stdout);
      expect(view).toMatchObject({ prefix: join(project.dir, 'store'), maxConcurrent: 16, executor: 'threads', sources: { prefix: 'file', executor: 'file' } });
      expect(Object.keys(view.executors)).toEqual(['threads', 'local', 'gpu']);
    } finally {
      rmSync(join(project.dir, 'cairn.config.ts'));
    }
  });

  it('runs a TypeScript pipeline with top-level await, on inline and on threads', () => {
    writeFileSync(join(project.dir, 'cairn.config.ts'), "import { defineConfig } from '@cairn/cli';\nexport default defineConfig({ prefix: './store', defaults: { executor: 'threads' } });\n");
    try {
      const r = cairn(project.dir, ['run', 'pipeline.ts']);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const [out] = readdirSync(join(project.dir, 'store', 'greet')).filter((n) => /^v1-[0-9a-f]{16}$/.test(n));
      expect(readFileSync(join(project.dir, 'store', 'greet', out as string, 'greeting.txt'), 'utf8')).toBe('hello world');
      const inline = cairn(project.dir, ['run', 'pipeline.ts', '--executor', 'inline', '--prefix', 'inline-store']);
      expect(inline.code, inline.stdout + inline.stderr).toBe(0);
    } finally {
      rmSync(join(project.dir, 'cairn.config.ts'));
    }
  });

  it('runs a JavaScript pipeline written with import/export (Node 20 would refuse it in a CommonJS package)', () => {
    writeFileSync(join(project.dir, 'plain.js'), "import { apply, OUT } from '@cairn/core';\nexport const targets = [apply({ name: 'plain', fn: async () => 1, version: 'v1', inputs: { out: OUT } })];\n");
    const r = cairn(project.dir, ['run', 'plain.js', '--prefix', 'js-store']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('1 succeeded');
  });

  it('shows the first real error of a file that does not load, with file:line:col, without --verbose', () => {
    writeFileSync(join(project.dir, 'typo.ts'), "import { apply } from '@cairn/core';\nexport const targets = [apply({ name: 'x', fn: () => 1, version: 'v1', inputs: { } }),;\n");
    const ts = cairn(project.dir, ['plan', 'typo.ts', '--prefix', 's']);
    expect(ts.code).toBe(2);
    expect(ts.stderr).not.toContain('Transform failed');
    expect(ts.stderr).toContain(`${join(project.dir, 'typo.ts')}:2:`);
    expect(ts.stderr).toContain('[CAIRN_PIPELINE_LOAD]');

    // A JavaScript syntax error in a module the pipeline imports: Node 20 does not say where it is.
    writeFileSync(join(project.dir, 'helper.mjs'), 'export const x = {\n  a: 1,\n  b: 2 3,\n};\n');
    writeFileSync(join(project.dir, 'uses-helper.mjs'), "import { x } from './helper.mjs';\nexport const targets = x;\n");
    const js = cairn(project.dir, ['plan', 'uses-helper.mjs', '--prefix', 's']);
    expect(js.code).toBe(2);
    expect(js.stderr).toContain(`${join(project.dir, 'helper.mjs')}:3:8`);

    writeFileSync(join(project.dir, 'throws.ts'), "const n: number = 1;\nif (n === 1) throw new Error('the data directory is not mounted');\nexport const targets = [];\n");
    const thrown = cairn(project.dir, ['plan', 'throws.ts', '--prefix', 's']);
    expect(thrown.code).toBe(2);
    expect(thrown.stderr).toContain('the data directory is not mounted');
    expect(thrown.stderr).toContain(`(at ${join(project.dir, 'throws.ts')}:2:`);

    const badConfig = cairn(project.dir, ['config'], { CAIRN_CONFIG: 'typo.ts' });
    expect(badConfig.code).toBe(2);
    expect(badConfig.stderr).toContain('Cannot load the config file');
    expect(badConfig.stderr).toContain('[CAIRN_CONFIG]');
  });
});

describe('an ES-module project', () => {
  it('runs the same TypeScript pipeline with "type": "module"', () => {
    const project = makeProject([], { packageJson: { ...NPM_INIT, type: 'module' } });
    try {
      writeFileSync(join(project.dir, 'steps.ts'), STEPS_TS);
      writeFileSync(join(project.dir, 'pipeline.ts'), PIPELINE_TLA.replace("from './steps'", "from './steps.js'"));
      const r = cairn(project.dir, ['run', 'pipeline.ts', '--executor', 'threads', '--prefix', project.prefix]);
      expect(r.code, r.stdout + r.stderr).toBe(0);
    } finally {
      project.cleanup();
    }
  });
});
