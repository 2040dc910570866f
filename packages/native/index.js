'use strict';
// Loads the Rust N-API build of Cairn's hashing and graph kernels, if there is one.
//
// Candidates, in order: $CAIRN_NATIVE_PATH, then the platform-named local build next to
// this file (`napi build --platform --release`). Every failure is collected in
// `loadErrors`. CAIRN_NATIVE=0 skips loading; CAIRN_NATIVE=1 makes a failed load an error.
// There are no install scripts: without a build this module loads and reports 'js'.

const { existsSync, readFileSync } = require('node:fs');
const { join, resolve } = require('node:path');

/** Must equal `ABI_VERSION` in src/js.rs; a stale build is refused. */
const ABI_VERSION = 2;
const BINARY_NAME = 'cairn-native';

function isMusl() {
  if (process.platform !== 'linux') return false;
  try {
    // Cheap and reliable where it exists; process.report costs a few ms.
    return readFileSync('/usr/bin/ldd', 'latin1').includes('musl');
  } catch {}
  try {
    return !process.report.getReport().header.glibcVersionRuntime;
  } catch {
    return existsSync('/etc/alpine-release');
  }
}

/** The napi-rs platform triple, e.g. `linux-x64-gnu`, `darwin-arm64`, `win32-x64-msvc`. */
function platformTriple() {
  const { platform, arch } = process;
  if (platform === 'linux') return `linux-${arch}-${isMusl() ? 'musl' : 'gnu'}`;
  if (platform === 'win32') return `win32-${arch}-msvc`;
  return `${platform}-${arch}`;
}

function failure(path, message, code, cause) {
  const err = new Error(`${path}: ${message}`, cause === undefined ? undefined : { cause });
  err.code = code;
  err.path = path;
  return err;
}

function tryLoad(path, loadErrors) {
  if (!existsSync(path)) {
    loadErrors.push(failure(path, 'no such file (not built?)', 'CAIRN_NATIVE_NOT_FOUND'));
    return null;
  }
  try {
    const mod = require(path);
    if (mod.abiVersion !== ABI_VERSION) {
      loadErrors.push(
        failure(path, `ABI version ${mod.abiVersion} does not match ${ABI_VERSION}; rebuild with \`npm run build -w @cairn/native\``, 'CAIRN_NATIVE_ABI'),
      );
      return null;
    }
    return mod;
  } catch (err) {
    loadErrors.push(failure(path, `failed to load: ${err && err.message}`, (err && err.code) || 'CAIRN_NATIVE_LOAD', err));
    return null;
  }
}

function load() {
  const mode = process.env.CAIRN_NATIVE;
  const loadErrors = [];
  if (mode === '0') return { binding: null, backend: 'js', loadErrors, loadedFrom: null };
  const candidates = [];
  if (process.env.CAIRN_NATIVE_PATH) candidates.push(resolve(process.env.CAIRN_NATIVE_PATH));
  candidates.push(join(__dirname, `${BINARY_NAME}.${platformTriple()}.node`));
  for (const path of candidates) {
    const binding = tryLoad(path, loadErrors);
    if (binding) return { binding, backend: 'native', loadErrors, loadedFrom: path };
  }
  if (mode === '1') {
    const err = new Error(
      `CAIRN_NATIVE=1 but the native module could not be loaded (tried ${candidates.join(', ')}). ` +
        'Build it with `npm run build -w @cairn/native` (needs Rust), or unset CAIRN_NATIVE to use the TypeScript fallback.',
      { cause: new AggregateError(loadErrors, 'native load failures') },
    );
    err.code = 'CAIRN_NATIVE_UNAVAILABLE';
    throw err;
  }
  return { binding: null, backend: 'js', loadErrors, loadedFrom: null };
}

const { binding, backend, loadErrors, loadedFrom } = load();

module.exports = { binding, backend, loadErrors, loadedFrom, platformTriple };
