'use strict';
// Loads the Rust N-API build of Cairn's hashing and graph kernels and batch file reader, if there is one.
//
// Candidates, in order: $CAIRN_NATIVE_PATH; a local build next to this file
// (`cairn-native.<triple>.node`, what `npm run build -w @cairn/native` writes); the prebuilt
// binary of this platform's package `@cairn/native-<triple>` (an optional dependency, installed
// only on its platform). Every failure is collected in `loadErrors`. There are no install scripts.
//
// CAIRN_NATIVE=0 skips loading (silently); CAIRN_NATIVE=1 makes a failed load an error
// (CAIRN_NATIVE_MISSING when there is no binary, CAIRN_NATIVE_UNAVAILABLE when one fails to
// load). Otherwise the TypeScript fallback in @cairn/core answers (same results) and one line on
// stderr says so, once per process tree (CAIRN_NATIVE_NOTICE=0 silences it; child processes
// and workers inherit that setting from the process that printed it).

const { existsSync, readFileSync } = require('node:fs');
const { join, resolve } = require('node:path');

/** Must equal `ABI_VERSION` in src/js.rs; a stale build is refused. */
const ABI_VERSION = 8;
const BINARY_NAME = 'cairn-native';
const DOCS = 'https://github.com/cairn-pipelines/cairn/tree/main/packages/native#readme';

/**
 * Platforms with a prebuilt package `@cairn/native-<triple>`. scripts/platforms.mjs generates
 * each package under npm/ from this table; `minimum` is what its binary needs to load.
 */
const PLATFORMS = [
  { triple: 'linux-x64-gnu', os: 'linux', cpu: 'x64', libc: 'glibc', rustTarget: 'x86_64-unknown-linux-gnu', minimum: 'glibc ≥ 2.17' },
  { triple: 'linux-arm64-gnu', os: 'linux', cpu: 'arm64', libc: 'glibc', rustTarget: 'aarch64-unknown-linux-gnu', minimum: 'glibc ≥ 2.17' },
  { triple: 'linux-x64-musl', os: 'linux', cpu: 'x64', libc: 'musl', rustTarget: 'x86_64-unknown-linux-musl', minimum: 'musl ≥ 1.2.3' },
  { triple: 'linux-arm64-musl', os: 'linux', cpu: 'arm64', libc: 'musl', rustTarget: 'aarch64-unknown-linux-musl', minimum: 'musl ≥ 1.2.3' },
  { triple: 'darwin-x64', os: 'darwin', cpu: 'x64', libc: null, rustTarget: 'x86_64-apple-darwin', minimum: 'macOS ≥ 10.12' },
  { triple: 'darwin-arm64', os: 'darwin', cpu: 'arm64', libc: null, rustTarget: 'aarch64-apple-darwin', minimum: 'macOS ≥ 11' },
  { triple: 'win32-x64-msvc', os: 'win32', cpu: 'x64', libc: null, rustTarget: 'x86_64-pc-windows-msvc', minimum: 'Windows 10' },
];

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

/** The package holding the prebuilt binary for `triple`, or null when none is published. */
function packageFor(triple) {
  return PLATFORMS.some((p) => p.triple === triple) ? `@cairn/native-${triple}` : null;
}

function ownVersion() {
  try {
    return require('./package.json').version;
  } catch {
    return undefined;
  }
}

function failure(path, message, code, cause) {
  const err = new Error(`${path}: ${message}`, cause === undefined ? undefined : { cause });
  err.code = code;
  err.path = path;
  return err;
}

/** An error @cairn/core's `isCairnError` recognises (the same symbol brand), with a stable code. */
function cairnError(code, message, cause) {
  const err = new Error(message, { cause });
  err.name = 'CairnError';
  err.code = code;
  err.step = undefined;
  err.retryable = false;
  Object.defineProperty(err, Symbol.for('cairn.error'), { value: true });
  return err;
}

function tryLoad(path, loadErrors) {
  try {
    const mod = require(path);
    if (mod.abiVersion !== ABI_VERSION) {
      loadErrors.push(failure(path, `ABI version ${mod.abiVersion} does not match ${ABI_VERSION} (a stale build or a mismatched @cairn/native-* version)`, 'CAIRN_NATIVE_ABI'));
      return null;
    }
    return mod;
  } catch (err) {
    loadErrors.push(failure(path, `failed to load: ${err && err.message}`, (err && err.code) || 'CAIRN_NATIVE_LOAD', err));
    return null;
  }
}

function tryFile(path, loadErrors) {
  if (existsSync(path)) return tryLoad(path, loadErrors);
  loadErrors.push(failure(path, 'no such file', 'CAIRN_NATIVE_NOT_FOUND'));
  return null;
}

function tryPackage(name, loadErrors) {
  let path;
  try {
    path = require.resolve(name);
  } catch {
    loadErrors.push(failure(name, 'not installed', 'CAIRN_NATIVE_NOT_FOUND'));
    return { binding: null, path: null };
  }
  return { binding: tryLoad(path, loadErrors), path };
}

/** A source checkout (the Cairn repository) builds its own binary; a consumer installs a package. */
const inSourceCheckout = () => existsSync(join(__dirname, 'Cargo.toml'));

/** How to get a binary for this platform, as one sentence. */
function howToGetOne(triple, pkg) {
  if (inSourceCheckout()) return 'Build it with `npm run build -w @cairn/native` (needs Rust: https://rustup.rs)';
  if (pkg) {
    const version = ownVersion();
    return `Install it with \`npm install ${pkg}${version ? `@${version}` : ''}\` (an optional dependency of @cairn/native, skipped by --omit=optional)`;
  }
  const prebuilt = PLATFORMS.map((p) => p.triple).join(', ');
  return `No prebuilt module exists for ${triple} (prebuilt: ${prebuilt}): build one from source and set CAIRN_NATIVE_PATH to it`;
}

function load() {
  const mode = process.env.CAIRN_NATIVE;
  const triple = platformTriple();
  const pkg = packageFor(triple);
  const loadErrors = [];
  const result = (binding, loadedFrom, reason) => ({ binding, loadErrors, loadedFrom, triple, pkg, reason });
  if (mode === '0') return result(null, null, 'CAIRN_NATIVE=0');

  if (process.env.CAIRN_NATIVE_PATH) {
    const path = resolve(process.env.CAIRN_NATIVE_PATH);
    const binding = tryFile(path, loadErrors);
    if (binding) return result(binding, path, `loaded ${path}`);
  }
  const local = join(__dirname, `${BINARY_NAME}.${triple}.node`);
  const binding = tryFile(local, loadErrors);
  if (binding) return result(binding, local, `loaded ${local}`);
  if (pkg) {
    const found = tryPackage(pkg, loadErrors);
    if (found.binding) return result(found.binding, found.path, `loaded ${found.path}`);
  }

  const failed = loadErrors.find((e) => e.code !== 'CAIRN_NATIVE_NOT_FOUND');
  if (mode === '1') {
    const cause = new AggregateError(loadErrors, 'native load failures');
    if (failed) {
      throw cairnError(
        'CAIRN_NATIVE_UNAVAILABLE',
        `CAIRN_NATIVE=1, but the native module failed to load: ${failed.message}. ` +
          `${inSourceCheckout() ? 'Rebuild it with `npm run build -w @cairn/native`' : `Reinstall ${pkg ?? '@cairn/native'} at the version of @cairn/native`} ` +
          `(see ${DOCS}), or unset CAIRN_NATIVE to use the TypeScript fallback (same results).`,
        cause,
      );
    }
    const path = process.env.CAIRN_NATIVE_PATH ? ` (CAIRN_NATIVE_PATH=${process.env.CAIRN_NATIVE_PATH} does not exist)` : '';
    throw cairnError(
      'CAIRN_NATIVE_MISSING',
      `CAIRN_NATIVE=1, but there is no native module for ${triple}${path}. ${howToGetOne(triple, pkg)} ` +
        `(see ${DOCS}), or unset CAIRN_NATIVE to use the TypeScript fallback (same results).`,
      cause,
    );
  }
  if (failed) return result(null, null, `the native module failed to load (${failed.message})`);
  if (inSourceCheckout()) return result(null, null, 'no native build (`npm run build -w @cairn/native` makes one; needs Rust)');
  if (!pkg) return result(null, null, `no prebuilt native module for ${triple}`);
  return result(null, null, `${pkg} is not installed`);
}

const loaded = load();
const backend = loaded.binding ? 'native' : 'js';
const notice =
  backend === 'js' && process.env.CAIRN_NATIVE !== '0'
    ? `[cairn] ${loaded.reason}; using the TypeScript fallback (same results, slower). CAIRN_NATIVE_NOTICE=0 hides this line.`
    : null;

/** Everything the loader decided, as data (for `cairn config` and diagnostics). */
const status = Object.freeze({
  backend,
  platform: loaded.triple,
  package: loaded.pkg,
  loadedFrom: loaded.loadedFrom,
  reason: loaded.reason,
  notice,
});

// Once per process tree: the variable set here is inherited by workers and child processes.
if (notice && process.env.CAIRN_NATIVE_NOTICE !== '0') {
  process.env.CAIRN_NATIVE_NOTICE = '0';
  // @cairn/core prints its own line about a failed load unless this is set.
  globalThis[Symbol.for('cairn.backendNotice')] = true;
  process.stderr.write(`${notice}\n`);
}

// Shorthand properties only, so Node's ESM loader can see the names (`import { status } from …`).
const { binding, loadErrors, loadedFrom } = loaded;
const platforms = PLATFORMS;
module.exports = { binding, backend, loadErrors, loadedFrom, status, platforms, platformTriple };
