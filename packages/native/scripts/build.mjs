#!/usr/bin/env node
// Builds the native module: `cargo build --release --locked` (the crates pinned in Cargo.lock,
// fetched from crates.io on a fresh clone), then copies the library to
// `cairn-native.<triple>.node` next to index.js (the loader's "local build" candidate).
// Without a Rust toolchain it says so in one line and succeeds: Cairn then runs on its
// TypeScript fallback (same answers). CAIRN_NATIVE=1 makes a missing toolchain an error.
//
//   node scripts/build.mjs                       this machine's platform
//   node scripts/build.mjs --target <rust triple> cross or release builds (README.md, "Releasing")
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { TYPE_DEF_DIR, bindingTypesFrom } from './binding-types.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const { values } = parseArgs({ options: { target: { type: 'string' } } });

const cargo = spawnSync('cargo', ['--version'], { encoding: 'utf8' });
if (cargo.status !== 0) {
  const msg = '@cairn/native: no Rust toolchain (cargo) found; skipping the native build. Cairn will use its TypeScript fallback.';
  if (process.env.CAIRN_NATIVE === '1') {
    console.error(`${msg} CAIRN_NATIVE=1 requires it: install Rust (https://rustup.rs).`);
    process.exit(1);
  }
  console.log(msg);
  process.exit(0);
}

// The loader holds the platform table; CAIRN_NATIVE=0 keeps it from loading (or announcing) a build.
process.env.CAIRN_NATIVE = '0';
const { platforms, platformTriple } = await import('../index.js').then((m) => m.default);
const platform = values.target ? platforms.find((p) => p.rustTarget === values.target) : platforms.find((p) => p.triple === platformTriple());
if (!platform && values.target) {
  console.error(`@cairn/native: no platform package for Rust target ${values.target} (known: ${platforms.map((p) => p.rustTarget).join(', ')})`);
  process.exit(1);
}
const triple = platform ? platform.triple : platformTriple();

const args = ['build', '--release', '--locked', ...(values.target ? ['--target', values.target] : [])];
// musl's default is a static executable; a Node addon must link musl dynamically.
const env = platform?.libc === 'musl' ? { ...process.env, RUSTFLAGS: `${process.env.RUSTFLAGS ?? ''} -C target-feature=-crt-static`.trim() } : { ...process.env };
// napi-derive writes each export's type definition there while it compiles the crate.
const typeDefs = join(root, TYPE_DEF_DIR);
mkdirSync(typeDefs, { recursive: true });
env.NAPI_TYPE_DEF_TMP_FOLDER = typeDefs;
const r = spawnSync('cargo', args, { cwd: root, stdio: 'inherit', env });
if (r.status !== 0) process.exit(r.status ?? 1);

const os = platform?.os ?? process.platform;
const file = os === 'win32' ? 'cairn_native.dll' : os === 'darwin' ? 'libcairn_native.dylib' : 'libcairn_native.so';
const built = join(root, 'target', ...(values.target ? [values.target] : []), 'release', file);
if (!existsSync(built)) {
  console.error(`@cairn/native: cargo succeeded but ${built} does not exist`);
  process.exit(1);
}
const out = join(root, `cairn-native.${triple}.node`);
copyFileSync(built, out);
console.log(`@cairn/native: built ${out}`);

// binding.d.ts follows the #[napi] exports (committed: a consumer without Rust needs it too).
const defs = join(typeDefs, 'cairn-native');
if (existsSync(defs)) {
  const types = bindingTypesFrom(defs);
  const file = join(root, 'binding.d.ts');
  if (!existsSync(file) || readFileSync(file, 'utf8') !== types) {
    // In CI the committed file is checked (test/binding-types.test.ts), not rewritten.
    if (process.env.CI) console.log(`@cairn/native: ${file} differs from the #[napi] exports; rebuild locally and commit it`);
    else {
      writeFileSync(file, types);
      console.log(`@cairn/native: wrote ${file} from the #[napi] exports (commit it)`);
    }
  }
}
