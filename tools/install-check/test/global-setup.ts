/**
 * Packs every package once for all test files, as a release would: `npm pack` for the
 * TypeScript packages (after the build that Nx runs before this project's tests), and
 * packages/native/scripts/stage.mjs for @cairn/native and this machine's platform package.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { PACKAGE_DIRS, manifest, type Packed } from './helpers/packages.js';
import { repoRoot, sh, show } from './helpers/sh.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Every packed tarball, the platform package of this machine included when it was built. */
    packed: Packed[];
    /** The directory holding them. */
    packDir: string;
  }
}

export default function setup(project: TestProject): () => void {
  const packDir = mkdtempSync(join(tmpdir(), 'cairn-packs-'));
  const packed: Packed[] = [];
  for (const dir of PACKAGE_DIRS.filter((d) => d !== 'native')) {
    const { name } = manifest(dir);
    const r = sh(`npm pack --json --pack-destination ${JSON.stringify(packDir)} -w ${name}`, repoRoot);
    if (r.status !== 0) throw new Error(`packing ${name} failed\n${show(r)}`);
    const [info] = JSON.parse(r.stdout) as [{ filename: string }];
    packed.push({ name, tarball: join(packDir, info.filename) });
  }
  const r = sh(`node packages/native/scripts/stage.mjs --pack --out ${JSON.stringify(join(packDir, 'native'))}`, repoRoot);
  if (r.status !== 0) throw new Error(`staging @cairn/native failed\n${show(r)}`);
  const staged = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}') as { packages: { name: string; tarball: string }[] };
  for (const p of staged.packages) packed.push({ name: p.name, tarball: p.tarball });
  project.provide('packed', packed);
  project.provide('packDir', packDir);
  return () => rmSync(packDir, { recursive: true, force: true });
}
