import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import loader from '../index.js';
import { GLIBC_FLOOR, aboveFloor, glibcNeeds } from '../scripts/glibc.mjs';

// The Linux gnu build must load on glibc 2.17 (README.md, "Platforms"). Linked on this
// machine's newer glibc, Rust's std would need GLIBC_2.33 (stat64, fstat64) and 2.28/2.30
// (statx, gettid); src/glibc_floor.rs binds those to system calls instead.
const built = loader.platformTriple().endsWith('-gnu') && loader.loadedFrom !== null && existsSync(loader.loadedFrom) ? loader.loadedFrom : null;

describe.runIf(process.platform === 'linux')('glibc floor of the built module', () => {
  if (!built) {
    if (process.env.CI) it('native build exists in CI', () => expect.fail('run `npm run build -w @cairn/native` first'));
    return;
  }

  it(`needs no glibc symbol version above ${GLIBC_FLOOR} (objdump -T)`, () => {
    const needs = glibcNeeds(built);
    if (needs === null && !process.env.CI) return; // no binutils here
    expect(needs, 'objdump is installed in CI').not.toBeNull();
    expect(needs!.length).toBeGreaterThan(10); // read the table, not an empty parse
    expect(aboveFloor(built)).toEqual([]);
  });

  it('defines the four functions it binds to system calls, so std never asks glibc for them', () => {
    const needs = glibcNeeds(built) ?? [];
    for (const symbol of ['stat64', 'fstat64', 'statx', 'gettid']) expect(needs.map((n) => n.symbol)).not.toContain(symbol);
  });
});
