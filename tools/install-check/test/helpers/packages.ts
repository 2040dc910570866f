/** The published packages of this repository, as the tests pack and install them. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './sh.js';

/** Packages others depend on come first; the rest follow by name. */
const ORDER = ['core', 'native', 'runner'];

/** Every package a user installs, by directory under packages/ (a manifest that is not private); those others depend on first. */
export const PACKAGE_DIRS: readonly string[] = readdirSync(join(repoRoot, 'packages'))
  .filter((d) => existsSync(join(repoRoot, 'packages', d, 'package.json')) && !(JSON.parse(readFileSync(join(repoRoot, 'packages', d, 'package.json'), 'utf8')) as { private?: boolean }).private)
  .sort((a, b) => (ORDER.indexOf(a) + 1 || 99) - (ORDER.indexOf(b) + 1 || 99) || a.localeCompare(b));

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
