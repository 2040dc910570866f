import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import loader from '../index.js';
import { platformFiles } from '../scripts/platforms.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const tmp = mkdtempSync(join(tmpdir(), 'cairn-native-platforms-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const cleanEnv = (extra: Record<string, string> = {}) => {
  const env = { ...process.env };
  for (const k of ['CAIRN_NATIVE', 'CAIRN_NATIVE_PATH', 'CAIRN_NATIVE_NOTICE', 'NODE_OPTIONS']) delete env[k];
  return { ...env, ...extra };
};
const node = (args: string[], cwd: string, env: Record<string, string> = {}) => spawnSync(process.execPath, args, { cwd, env: cleanEnv(env), encoding: 'utf8' });

describe('platform packages', () => {
  it('npm/<triple>/ is what scripts/platforms.mjs generates from the loader table', async () => {
    const files = await platformFiles();
    expect(Object.keys(files)).toHaveLength(loader.platforms.length * 2);
    for (const [rel, text] of Object.entries(files)) expect(readFileSync(join(root, rel), 'utf8'), rel).toBe(text);
    const r = node(['scripts/platforms.mjs', '--check'], root);
    expect(r.status, r.stderr).toBe(0);
  });

  it('each names its platform for npm (os, cpu, libc), carries only its binary, at the version of @cairn/native', async () => {
    const files = await platformFiles();
    const triples = loader.platforms.map((p) => p.triple);
    expect(triples).toEqual(expect.arrayContaining(['linux-x64-gnu', 'linux-arm64-gnu', 'linux-x64-musl', 'darwin-x64', 'darwin-arm64', 'win32-x64-msvc']));
    for (const p of loader.platforms) {
      const m = JSON.parse(files[`npm/${p.triple}/package.json`]!);
      expect(m).toMatchObject({ name: `@cairn/native-${p.triple}`, version: pkg.version, os: [p.os], cpu: [p.cpu], main: `cairn-native.${p.triple}.node`, files: [`cairn-native.${p.triple}.node`], license: 'Apache-2.0' });
      expect(m.libc).toEqual(p.libc ? [p.libc] : undefined);
      expect(m.scripts).toBeUndefined(); // no install scripts, ever
      expect(m.repository.url).toBe(pkg.repository.url);
    }
  });

  it('the workspace package refuses to be packed as is (it would publish no optional dependencies)', () => {
    const r = spawnSync('npm', ['pack', '--dry-run'], { cwd: root, env: cleanEnv(), encoding: 'utf8' });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/scripts\/stage\.mjs/);
  });

  it('the staged @cairn/native lists every platform package as an optional dependency, and ships no binary', () => {
    const out = join(tmp, 'stage');
    const r = node(['scripts/stage.mjs', '--out', out], root);
    expect(r.status, r.stderr).toBe(0);
    const staged = JSON.parse(readFileSync(join(out, 'native', 'package.json'), 'utf8'));
    expect(staged.optionalDependencies).toEqual(Object.fromEntries(loader.platforms.map((p) => [`@cairn/native-${p.triple}`, pkg.version])));
    expect(staged.scripts).toBeUndefined();
    expect(staged.files).not.toContain('*.node');
    expect(existsSync(join(out, 'native', 'LICENSE'))).toBe(true);
  });
});

describe.runIf(loader.backend === 'native')('the loader in an installed layout', () => {
  // node_modules/@cairn/native (no binary) + node_modules/@cairn/native-<triple> (the binary).
  const project = join(tmp, 'project');
  const triple = loader.platformTriple();
  const nm = join(project, 'node_modules', '@cairn');
  mkdirSync(join(nm, 'native'), { recursive: true });
  for (const f of ['index.js', 'index.d.ts', 'package.json']) cpSync(join(root, f), join(nm, 'native', f));
  const platformDir = join(nm, `native-${triple}`);
  const describeIt = `const m = require('@cairn/native'); console.log(JSON.stringify(m.status));`;

  it('picks the platform package when there is no local build', () => {
    mkdirSync(platformDir, { recursive: true });
    writeFileSync(join(platformDir, 'package.json'), JSON.stringify({ name: `@cairn/native-${triple}`, version: pkg.version, main: `cairn-native.${triple}.node` }));
    cpSync(loader.loadedFrom!, join(platformDir, `cairn-native.${triple}.node`));
    const r = node(['-e', describeIt], project);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({
      backend: 'native',
      platform: triple,
      package: `@cairn/native-${triple}`,
      loadedFrom: join(platformDir, `cairn-native.${triple}.node`),
      reason: `loaded ${join(platformDir, `cairn-native.${triple}.node`)}`,
      notice: null,
    });
  });

  it('without it: the fallback, announced once for the whole process tree', () => {
    rmSync(platformDir, { recursive: true, force: true });
    const code = `require('@cairn/native'); require('node:child_process').spawnSync(process.execPath, ['-e', "require('@cairn/native')"], { stdio: 'inherit' });
      const { Worker } = require('node:worker_threads'); new Worker("require('@cairn/native')", { eval: true });`;
    const r = node(['-e', code], project);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toBe(`[cairn] @cairn/native-${triple} is not installed; using the TypeScript fallback (same results, slower). CAIRN_NATIVE_NOTICE=0 hides this line.\n`);
    const status = JSON.parse(node(['-e', describeIt], project, { CAIRN_NATIVE_NOTICE: '0' }).stdout);
    expect(status).toMatchObject({ backend: 'js', loadedFrom: null, reason: `@cairn/native-${triple} is not installed` });
    expect(status.notice).toMatch(/^\[cairn\] /);
  });

  it('CAIRN_NATIVE=1 without it: CAIRN_NATIVE_MISSING naming the package to install, with the causes', () => {
    const code = `try { require('@cairn/native') } catch (e) { console.log(JSON.stringify({ name: e.name, code: e.code, message: e.message, brand: e[Symbol.for('cairn.error')] === true, causes: e.cause.errors.map((c) => c.code) })) }`;
    const r = node(['-e', code], project, { CAIRN_NATIVE: '1' });
    const e = JSON.parse(r.stdout);
    expect(e).toMatchObject({ name: 'CairnError', code: 'CAIRN_NATIVE_MISSING', brand: true, causes: ['CAIRN_NATIVE_NOT_FOUND', 'CAIRN_NATIVE_NOT_FOUND'] });
    expect(e.message).toContain(`npm install @cairn/native-${triple}@${pkg.version}`);
    expect(e.message).toMatch(/https:\/\/\S+#readme/);
    expect(e.message).not.toMatch(/npm run build/); // a consumer has no repository to build in
  });
});
