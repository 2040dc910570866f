/** The published packages of this repository, as the tests pack and install them. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './sh.js';

/** Every package a user installs, by directory under packages/. */
export const PACKAGE_DIRS = ['core', 'native', 'runner', 'remote-ssh', 'remote-slurm', 'cli'] as const;

/** One package's manifest, as far as these tests read it. */
export interface Manifest {
  readonly name: string;
  readonly version: string;
  readonly description?: string;
  readonly license?: string;
  readonly homepage?: string;
  readonly repository?: { type: string; url: string; directory?: string };
  readonly bugs?: { url: string };
  readonly engines?: { node?: string };
  readonly main?: string;
  readonly types?: string;
  readonly bin?: Record<string, string>;
  readonly exports?: Record<string, unknown>;
  readonly files?: string[];
  readonly scripts?: Record<string, string>;
  readonly dependencies?: Record<string, string>;
  readonly optionalDependencies?: Record<string, string>;
  readonly os?: string[];
  readonly cpu?: string[];
  readonly libc?: string[];
}

/** The manifest of packages/<dir> (or of any directory given as an absolute path). */
export function manifest(dir: string): Manifest {
  const path = dir.startsWith('/') ? join(dir, 'package.json') : join(repoRoot, 'packages', dir, 'package.json');
  return JSON.parse(readFileSync(path, 'utf8')) as Manifest;
}

/** A packed package: its name and tarball path. */
export interface Packed {
  readonly name: string;
  readonly tarball: string;
}
