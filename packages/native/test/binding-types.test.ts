import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import loader from '../index.js';
import { TYPE_DEF_DIR, bindingTypesFrom } from '../scripts/binding-types.mjs';

// binding.d.ts is generated from the #[napi] exports by scripts/build.mjs and committed (a
// consumer without Rust needs it); these checks keep it and the built module in step.
const root = join(import.meta.dirname, '..');
const defs = join(root, TYPE_DEF_DIR, 'cairn-native');
const committed = readFileSync(join(root, 'binding.d.ts'), 'utf8');

describe('binding.d.ts', () => {
  it.runIf(existsSync(defs) || process.env.CI)('is what the last build generated from the #[napi] exports', () => {
    expect(existsSync(defs), 'npm run build -w @cairn/native writes the type definitions').toBe(true);
    expect(committed, 'binding.d.ts is stale: rebuild (npm run build -w @cairn/native) and commit it').toBe(bindingTypesFrom(defs));
  });

  it.runIf(loader.binding)('declares every function the module exports, and only those', () => {
    const declared = [...committed.matchAll(/^ {2}(\w+)\(/gm)].map((m) => m[1]).sort();
    const exported = Object.entries(loader.binding!)
      .filter(([, v]) => typeof v === 'function')
      .map(([k]) => k)
      .sort();
    expect(declared.length).toBeGreaterThan(10);
    expect(declared).toEqual(exported);
  });
});
