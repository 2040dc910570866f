import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { backend, backendReason, getBackend, nativeBackend } from '../src/backend.js';

// Loader behaviour depends on the environment at import, so each case runs in a child process.
const coreDir = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);
const nativeIndex = require.resolve('@cairn/native');
const tsxLoader = pathToFileURL(require.resolve('tsx', { paths: [coreDir] })).href;
const backendTs = pathToFileURL(join(coreDir, 'src/backend.ts')).href;

const cleanEnv = (extra: Record<string, string>): NodeJS.ProcessEnv => {
  const env = { ...process.env };
  for (const k of ['CAIRN_NATIVE', 'CAIRN_NATIVE_PATH', 'CAIRN_DEBUG', 'NODE_OPTIONS', 'FORCE_COLOR']) delete env[k];
  env.NO_COLOR = '1';
  return { ...env, ...extra };
};

/** Runs a CommonJS snippet; returns its stdout parsed as JSON, or the failure. */
function runCjs(code: string, env: Record<string, string>, cwd = coreDir) {
  const r = spawnSync(process.execPath, ['-e', code], { cwd, env: cleanEnv(env), encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, json: r.status === 0 && r.stdout ? JSON.parse(r.stdout) : undefined };
}

/** Imports src/backend.ts (through tsx) in a child; `@cairn/native` may be redirected to another loader copy. */
function runBackend(env: Record<string, string>, nativeOverride?: string) {
  const tmp = mkdtempSync(join(tmpdir(), 'cairn-backend-'));
  const imports = ['--import', tsxLoader];
  if (nativeOverride) {
    const hooks = join(tmp, 'hooks.mjs');
    writeFileSync(
      hooks,
      `export async function resolve(spec, ctx, next) {
         if (spec === '@cairn/native') return { url: ${JSON.stringify(pathToFileURL(nativeOverride).href)}, shortCircuit: true };
         return next(spec, ctx);
       }`,
    );
    const register = join(tmp, 'register.mjs');
    writeFileSync(register, `import { register } from 'node:module'; register(${JSON.stringify(pathToFileURL(hooks).href)});`);
    imports.push('--import', pathToFileURL(register).href);
  }
  const code = `const m = await import(${JSON.stringify(backendTs)}); console.log(JSON.stringify({ backend: m.backend, reason: m.backendReason, kind: m.getBackend().kind, hex: m.getBackend().xxh64Hex('abc') }));`;
  const r = spawnSync(process.execPath, [...imports, '--input-type=module', '-e', code], { cwd: coreDir, env: cleanEnv(env), encoding: 'utf8' });
  rmSync(tmp, { recursive: true, force: true });
  return { status: r.status, stderr: r.stderr, json: r.status === 0 ? JSON.parse(r.stdout) : undefined };
}

/** A copy of the loader in a directory with no build next to it. */
const bare = mkdtempSync(join(tmpdir(), 'cairn-native-bare-'));
const bareIndex = join(bare, 'index.js');
copyFileSync(nativeIndex, bareIndex);
afterAll(() => rmSync(bare, { recursive: true, force: true }));

const describeLoader = `const m = require(process.argv[1] || '@cairn/native');
console.log(JSON.stringify({ backend: m.backend, loadedFrom: m.loadedFrom, binding: m.binding !== null,
  errors: m.loadErrors.map((e) => ({ code: e.code, path: e.path })) }));`;

describe('@cairn/native loader', () => {
  it('CAIRN_NATIVE=0 forces js without trying anything', () => {
    const r = runCjs(describeLoader, { CAIRN_NATIVE: '0' });
    expect(r.json).toEqual({ backend: 'js', loadedFrom: null, binding: false, errors: [] });
  });

  it('with no build and CAIRN_NATIVE unset, loads as js and says so in one line', () => {
    const r = runCjs(describeLoader.replace("process.argv[1] || '@cairn/native'", JSON.stringify(bareIndex)), {});
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/^\[cairn\] @cairn\/native-[\w-]+ is not installed; using the TypeScript fallback \(same results, slower\)\. CAIRN_NATIVE_NOTICE=0 hides this line\.\n$/);
    expect(r.json).toMatchObject({ backend: 'js', binding: false, errors: [{ code: 'CAIRN_NATIVE_NOT_FOUND' }, { code: 'CAIRN_NATIVE_NOT_FOUND' }] });
    expect(runCjs(describeLoader.replace("process.argv[1] || '@cairn/native'", JSON.stringify(bareIndex)), { CAIRN_NATIVE_NOTICE: '0' }).stderr).toBe('');
  });

  it('CAIRN_NATIVE=1 with a bogus path and no build throws CAIRN_NATIVE_MISSING with the causes', () => {
    const code = `try { require(${JSON.stringify(bareIndex)}); console.log('null'); } catch (e) {
      console.log(JSON.stringify({ code: e.code, message: e.message, causeIsAggregate: e.cause instanceof AggregateError,
        causes: e.cause.errors.map((c) => ({ code: c.code, path: c.path })) })); }`;
    const r = runCjs(code, { CAIRN_NATIVE: '1', CAIRN_NATIVE_PATH: '/nonexistent/cairn.node' });
    expect(r.json).toMatchObject({
      code: 'CAIRN_NATIVE_MISSING',
      causeIsAggregate: true,
      causes: [
        { code: 'CAIRN_NATIVE_NOT_FOUND', path: '/nonexistent/cairn.node' },
        { code: 'CAIRN_NATIVE_NOT_FOUND', path: expect.stringMatching(/cairn-native\.[\w-]+\.node$/) },
        { code: 'CAIRN_NATIVE_NOT_FOUND', path: expect.stringMatching(/^@cairn\/native-[\w-]+$/) },
      ],
    });
    // A consumer's copy (no Cargo.toml beside it) is told which package to install.
    expect(r.json.message).toMatch(/npm install @cairn\/native-[\w-]+/);
  });

  it('a file that exists but does not load is reported with its error, not hidden', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-native-broken-'));
    try {
      copyFileSync(nativeIndex, join(dir, 'index.js'));
      const triple = require(nativeIndex).platformTriple() as string;
      writeFileSync(join(dir, `cairn-native.${triple}.node`), 'not an ELF file');
      const r = runCjs(describeLoader.replace("process.argv[1] || '@cairn/native'", JSON.stringify(join(dir, 'index.js'))), {});
      expect(r.json).toMatchObject({ backend: 'js', errors: [{ code: 'ERR_DLOPEN_FAILED' }, { code: 'CAIRN_NATIVE_NOT_FOUND' }] });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.runIf(nativeBackend)('the native build', () => {
  it('loads with LD_BIND_NOW=1 (every N-API symbol resolves) and answers every export', () => {
    const code = `const { binding: b, backend } = require('@cairn/native');
      const s = new Uint8Array(b.xxh64StateBytes); b.xxh64Init(s, 1n); b.xxh64Update(s, 'abc');
      const o = Uint32Array.of(0, 0, 1), d = Uint32Array.of(0);
      console.log(JSON.stringify({ backend, hex: b.xxh64Hex('abc'), eq: b.xxh64Digest(s) === b.xxh64('abc', 1n),
        topo: Array.from(b.toposort(o, d).order), exp: Array.from(b.expand(o, d, Uint32Array.of(1), new Uint8Array(2), new Uint8Array(2)).order),
        fp: Buffer.from(b.fingerprintAll(o, d, Uint32Array.of(0, 1, 2), Buffer.from('ab'), Uint32Array.of(0, 2, 4), Buffer.from('{}{}')).hex).length }));`;
    const r = runCjs(code, { LD_BIND_NOW: '1' });
    expect(r.stderr).toBe('');
    expect(r.json).toEqual({ backend: 'native', hex: '44bc2cf5ad770999', eq: true, topo: [0, 1], exp: [0, 1], fp: 32 });
  });

  it('loads from CAIRN_NATIVE_PATH and from worker threads', () => {
    const path = require(nativeIndex).loadedFrom as string;
    const code = `const { Worker } = require('node:worker_threads');
      const w = new Worker("const { parentPort } = require('node:worker_threads'); const m = require(process.env.IDX); parentPort.postMessage([m.backend, m.binding.xxh64Hex('abc')]);", { eval: true });
      w.on('message', (m) => { console.log(JSON.stringify({ main: require(process.env.IDX).loadedFrom, worker: m })); w.terminate(); });`;
    const r = runCjs(code, { CAIRN_NATIVE_PATH: path, IDX: nativeIndex });
    expect(r.json).toEqual({ main: path, worker: ['native', '44bc2cf5ad770999'] });
  });
});

describe('core backend selection', () => {
  it('this process chose a backend and says why', () => {
    expect(getBackend().kind).toBe(backend);
    expect(backendReason.startsWith(`${backend}: `)).toBe(true);
    if (nativeBackend) expect(backendReason).toMatch(/^native: loaded .*\.node$/);
  });

  it('CAIRN_NATIVE=0 gives the js backend without a notice', () => {
    const r = runBackend({ CAIRN_NATIVE: '0' });
    expect(r.json).toEqual({ backend: 'js', reason: 'js: CAIRN_NATIVE=0', kind: 'js', hex: '44bc2cf5ad770999' });
    expect(r.stderr).toBe('');
  });

  it.runIf(nativeBackend)('unset CAIRN_NATIVE picks the native build', () => {
    const r = runBackend({});
    expect(r.json).toMatchObject({ backend: 'native', kind: 'native', reason: expect.stringMatching(/^native: loaded /) });
    expect(r.stderr).toBe('');
  });

  it('no build: js with the reason, announced in one line', () => {
    const r = runBackend({}, bareIndex);
    expect(r.json).toMatchObject({ backend: 'js', reason: expect.stringMatching(/^js: native build not found/) });
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^\[cairn\] .*using the TypeScript fallback/)]);
  });

  it('a build that fails to load: js with exactly one stderr line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-native-broken-'));
    try {
      copyFileSync(nativeIndex, join(dir, 'index.js'));
      const triple = require(nativeIndex).platformTriple() as string;
      writeFileSync(join(dir, `cairn-native.${triple}.node`), 'not an ELF file');
      const r = runBackend({}, join(dir, 'index.js'));
      expect(r.json).toMatchObject({ backend: 'js', reason: expect.stringMatching(/^js: native module failed to load/) });
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/^\[cairn\] the native module failed to load .*file too short/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('CAIRN_NATIVE=1 without a build fails the import with CAIRN_NATIVE_MISSING', () => {
    const r = runBackend({ CAIRN_NATIVE: '1' }, bareIndex);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/CAIRN_NATIVE=1, but there is no native module for/);
    expect(r.stderr).toMatch(/code: 'CAIRN_NATIVE_MISSING'/);
  });
});
