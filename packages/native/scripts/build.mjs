#!/usr/bin/env node
// Builds the native module with `napi build --platform --release`. Without a Rust toolchain it
// says so in one line and succeeds: Cairn then runs on its TypeScript fallback (same answers).
// CAIRN_NATIVE=1 makes a missing toolchain an error.
import { spawnSync } from 'node:child_process';

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
const r = spawnSync('npx', ['napi', 'build', '--platform', '--release'], { stdio: 'inherit' });
process.exit(r.status ?? 1);
