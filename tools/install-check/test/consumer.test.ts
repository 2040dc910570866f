/**
 * The packed packages as a user installs them: a fresh `npm init -y` project (CommonJS) with
 * this machine's native platform package, and a fresh `"type": "module"` project without it
 * (the TypeScript fallback). Each runs a TypeScript pipeline with the installed `cairn`,
 * loads every package, and type-checks ESM and CommonJS consumers under node16 and nodenext
 * (typed artifacts included: an expected type error must be one).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { PACKAGE_DIRS, manifest } from './helpers/packages.js';
import { repoRoot, sh, show, type Ran } from './helpers/sh.js';

const packed = inject('packed');
const names = PACKAGE_DIRS.map((d) => manifest(d).name);
const version = manifest('core').version;
const rootManifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
// The workspace's exact versions, so npm's cache has them.
const typescript = `typescript@${rootManifest.devDependencies.typescript}`;
const typesNode = `@types/node@${rootManifest.devDependencies['@types/node']}`;
const nativePlatform = packed.find((p) => p.name.startsWith('@cairn/native-'));
const work = mkdtempSync(join(tmpdir(), 'cairn-consumer-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The steps and pipeline of a user's project; `ext` is how a relative import names a file. */
function writePipeline(dir: string, ext: '' | '.js'): void {
  writeFileSync(
    join(dir, 'steps.ts'),
    `import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { defineStep } from '@cairn/core';

export const write = defineStep(import.meta.url, 'write', async ({ text, out }: { text: string; out: string }) => {
  await mkdir(out, { recursive: true });
  await writeFile(join(out, 'text.txt'), text);
});
export const count = defineStep(import.meta.url, 'count', async ({ data }: { data: string }) => ({
  chars: (await readFile(join(data, 'text.txt'), 'utf8')).length,
}));
`,
  );
  writeFileSync(
    join(dir, 'pipeline.ts'),
    `import { apply, OUT } from '@cairn/core';
import { count, write } from './steps${ext}';

const text = apply({ name: 'text', fn: write, version: '1', inputs: { text: 'hello cairn', out: OUT } });
export const targets = [apply({ name: 'count', fn: count, version: '1', inputs: { data: text } })];
`,
  );
}

/** Consumers of every package's types: one ESM file, one CommonJS file, two tsconfigs. */
function writeTypeConsumers(dir: string, esmFile: string, cjsFile: string): void {
  const body = `import { adopt, apply, artifacts, isCairnError, OUT, type StepContext, type StepSpec } from '@cairn/core';
import { StepRunner } from '@cairn/runner';
import { createSshExecutor } from '@cairn/remote-ssh';
import * as slurm from '@cairn/remote-slurm';
import { defineConfig, ExitCode } from '@cairn/cli';
import { status, type NativeStatus } from '@cairn/native';

const handle = apply({ name: 'n', fn: async (i: { out: string }) => i.out.length, version: '1', inputs: { out: OUT } });
const spec: StepSpec = handle.lower();
const runner: StepRunner = new StepRunner({ prefix: '/tmp/cairn-typecheck' });
const config = defineConfig({ prefix: './store' });
const native: NativeStatus = status;
export const used = [spec.nameWithHash, runner, config, native.backend, ExitCode.usage, isCairnError, createSshExecutor, slurm];

// Typed artifacts: the handle, run()/resolve() and ctx.resolved() follow the kind (tsc must flag the expected error).
const stats = apply({ name: 's', fn: async () => ({ rows: 1 }), version: '1', inputs: {}, artifact: artifacts.json<{ rows: number }>() });
const corpus = adopt({ name: 'c', version: '1', source: '/data/c' });
export async function typed(): Promise<number> {
  const loaded = await runner.resolve(stats);
  // @ts-expect-error a json<{ rows: number }> artifact has no "cols"
  void loaded.value.cols;
  const [dir] = await runner.load([corpus] as const);
  return loaded.value.rows + dir.value.files.length;
}
export const user = apply({ name: 'u', fn: async (_: { s: string }, ctx: StepContext) => (await ctx.resolved(stats)).rows, version: '1', inputs: { s: stats } });
`;
  writeFileSync(join(dir, esmFile), body);
  writeFileSync(join(dir, cjsFile), body);
  for (const mode of ['node16', 'nodenext']) {
    writeFileSync(
      join(dir, `tsconfig.${mode}.json`),
      JSON.stringify({
        compilerOptions: { module: mode, moduleResolution: mode, target: 'es2022', strict: true, noEmit: true, skipLibCheck: false, types: ['node'] },
        files: [esmFile, cjsFile],
      }),
    );
  }
}

interface Project {
  readonly dir: string;
  readonly install: Ran;
}

function createProject(name: string, type: 'commonjs' | 'module', withNative: boolean, flags = ''): Project {
  const dir = join(work, name);
  mkdirSync(dir);
  const init = sh('npm init -y', dir);
  if (init.status !== 0) throw new Error(show(init));
  if (type === 'module') sh('npm pkg set type=module', dir);
  const tarballs = packed.filter((p) => (withNative ? true : p !== nativePlatform)).map((p) => JSON.stringify(p.tarball));
  const install = sh(`npm install --no-audit --no-fund ${flags} ${tarballs.join(' ')}`, dir);
  const dev = sh(`npm install --no-audit --no-fund -D ${typescript} ${typesNode}`, dir);
  if (dev.status !== 0) throw new Error(show(dev));
  return { dir, install };
}

/** Install scripts of third-party dependencies that npm 11 lists (README.md, "Installing"). */
const KNOWN_INSTALL_SCRIPTS = ['esbuild', 'msgpackr-extract', 'ssh2', 'cpu-features'];

function checkInstall(p: Project): void {
  expect(p.install.status, show(p.install)).toBe(0);
  expect(p.install.stderr, show(p.install)).not.toMatch(/EBADENGINE|deprecated/);
  const listed = [...p.install.stderr.matchAll(/^npm warn install-scripts\s+(@?[^@\s]+)@/gm)].map((m) => m[1]);
  expect(listed.filter((n) => !KNOWN_INSTALL_SCRIPTS.includes(n!)), show(p.install)).toEqual([]);
  for (const name of names) {
    const m = JSON.parse(readFileSync(join(p.dir, 'node_modules', name, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare']) expect(m.scripts?.[hook], `${name} ${hook}`).toBeUndefined();
  }
}

function checkPipeline(p: Project): { first: Ran; process: Ran } {
  const first = sh('npx cairn run pipeline.ts --prefix ./store', p.dir);
  expect(first.status, show(first)).toBe(0);
  expect(first.stdout, show(first)).toMatch(/2 succeeded/);
  const again = sh('npx cairn run pipeline.ts --prefix ./store', p.dir);
  expect(again.stdout, show(again)).toMatch(/1 cached/);
  // Each step in its own child process, which re-imports steps.ts by module + export.
  const processRun = sh('npx cairn run pipeline.ts --prefix ./store-process --executor process', p.dir);
  expect(processRun.status, show(processRun)).toBe(0);
  expect(processRun.stdout, show(processRun)).toMatch(/2 succeeded/);
  const status = sh('npx cairn status --prefix ./store-process', p.dir);
  expect(status.stdout, show(status)).toMatch(/count\/1-[0-9a-f]{16}\s+SUCCESS[\s\S]*process/);
  // On worker threads, which load the TypeScript step module too (issue 19: "cannot import …steps.ts").
  const threadsRun = sh('npx cairn run pipeline.ts --prefix ./store-threads --executor threads', p.dir);
  expect(threadsRun.status, show(threadsRun)).toBe(0);
  expect(threadsRun.stdout, show(threadsRun)).toMatch(/2 succeeded/);
  expect(sh('npx cairn status --prefix ./store-threads', p.dir).stdout).toMatch(/count\/1-[0-9a-f]{16}\s+SUCCESS[\s\S]*threads/);
  return { first, process: processRun };
}

function checkTypes(p: Project): void {
  for (const mode of ['node16', 'nodenext']) {
    const r = sh(`npx tsc -p tsconfig.${mode}.json`, p.dir);
    expect(r.status, show(r)).toBe(0);
  }
}

describe('a fresh CommonJS project (npm init -y) with the native platform package', () => {
  let p: Project;
  beforeAll(() => {
    p = createProject('cjs', 'commonjs', true);
    writePipeline(p.dir, '');
    writeTypeConsumers(p.dir, 'consumer.mts', 'consumer.ts');
  });

  it('installs without engine warnings, and none of Cairn’s packages has an install script', () => {
    expect(nativePlatform, 'this machine’s platform package was built and packed').toBeDefined();
    checkInstall(p);
  });

  it('requires every package, and the CommonJS builds run a pipeline (CLI, runner, worker entry) and plan it', () => {
    writeFileSync(
      join(p.dir, 'require-all.js'),
      `for (const n of ${JSON.stringify(names)}) { const m = require(n); if (Object.keys(m).length < 3) throw new Error(n + ' exports ' + Object.keys(m)); }
const { main } = require('@cairn/cli');
main(['node', 'cairn', 'run', 'pipeline.ts', '--prefix', './store-cjs', '--executor', 'process'])
  .then((code) => (code === 0 ? main(['node', 'cairn', 'plan', 'pipeline.ts', '--prefix', './store-cjs']) : code))
  .then((code) => { process.exitCode = code; });\n`,
    );
    const r = sh('node require-all.js', p.dir);
    expect(r.status, show(r)).toBe(0);
    expect(r.stdout, show(r)).toMatch(/2 succeeded[\s\S]*2 step\(s\)/);
    expect(r.stderr, show(r)).not.toMatch(/import_meta/);
  });

  it('loads the native module from @cairn/native-<platform>, silently', () => {
    const r = sh(`node -e "console.log(JSON.stringify(require('@cairn/native').status))"`, p.dir);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toMatchObject({ backend: 'native', package: nativePlatform!.name, notice: null });
    expect(JSON.parse(r.stdout).loadedFrom).toContain(join('node_modules', nativePlatform!.name));
  });

  it('runs a TypeScript pipeline with the installed cairn (in-process, in child processes and on worker threads)', () => {
    const { first } = checkPipeline(p);
    expect(first.stderr, show(first)).not.toMatch(/\[cairn\]/);
  });

  it('type-checks an ESM (.mts) and a CommonJS (.ts) consumer under node16 and nodenext', () => checkTypes(p));
});

describe('a fresh "type": "module" project without a native binary', () => {
  let p: Project;
  beforeAll(() => {
    p = createProject('esm', 'module', false);
    writePipeline(p.dir, '.js');
    writeTypeConsumers(p.dir, 'consumer.ts', 'consumer.cts');
  });

  it('installs without engine warnings (the platform packages are optional)', () => checkInstall(p));

  it('imports every package', () => {
    writeFileSync(join(p.dir, 'import-all.js'), `for (const n of ${JSON.stringify(names)}) { const m = await import(n); if (Object.keys(m).length < 3) throw new Error(n); }\n`);
    const r = sh('node import-all.js', p.dir, { CAIRN_NATIVE_NOTICE: '0' });
    expect(r.status, show(r)).toBe(0);
  });

  it('runs the pipeline on the TypeScript fallback and says so once, child processes included', () => {
    const { first, process: processRun } = checkPipeline(p);
    for (const r of [first, processRun]) {
      const notices = r.stderr.split('\n').filter((l) => l.startsWith('[cairn]'));
      expect(notices, show(r)).toEqual([expect.stringMatching(/@cairn\/native-[\w-]+ is not installed; using the TypeScript fallback/)]);
    }
  });

  it('CAIRN_NATIVE=1: exit 2 and one line saying how to install the binary, no stack', () => {
    const r = sh('npx cairn status --prefix ./store', p.dir, { CAIRN_NATIVE: '1' });
    expect(r.status, show(r)).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines, show(r)).toHaveLength(1);
    expect(lines[0]).toMatch(/^cairn: CAIRN_NATIVE=1, .*npm install @cairn\/native-[\w-]+@\d+\.\d+\.\d+.*\[CAIRN_NATIVE_MISSING\]$/);
  });

  it('type-checks an ESM (.ts) and a CommonJS (.cts) consumer under node16 and nodenext', () => checkTypes(p));
});

describe('a project installed with --ignore-scripts', () => {
  // The way to install with no install-script warnings at all: Cairn needs none of them to run.
  let p: Project;
  beforeAll(() => {
    p = createProject('no-scripts', 'module', true, '--ignore-scripts');
    writePipeline(p.dir, '.js');
  });

  it('installs without any warning', () => {
    expect(p.install.status, show(p.install)).toBe(0);
    expect(p.install.stderr, show(p.install)).not.toMatch(/npm warn/);
  });

  it('runs the pipeline in child processes, and loads the SSH executor (ssh2, esbuild)', () => {
    const r = sh('npx cairn run pipeline.ts --prefix ./store --executor process', p.dir);
    expect(r.status, show(r)).toBe(0);
    expect(r.stdout, show(r)).toMatch(/2 succeeded/);
    writeFileSync(
      join(p.dir, 'bundle.js'),
      `const { createSshExecutor } = await import('@cairn/remote-ssh');
const esbuild = await import('esbuild');
const out = await esbuild.transform('const n: number = 1', { loader: 'ts' });
console.log(typeof createSshExecutor, out.code.trim());\n`,
    );
    const b = sh('node bundle.js', p.dir);
    expect(b.stdout, show(b)).toBe('function const n = 1;\n');
  });
});

it('packs the version every package declares', () => {
  for (const p of packed) expect(p.tarball).toContain(`-${version}.tgz`);
});
