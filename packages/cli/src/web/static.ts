/**
 * The page's files: built by Vite from `packages/cli/web/` into `dist/web/` (see
 * web/vite.config.ts). The page loads nothing from the network; every file it needs is here.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
};

/** The directory of the built page: `dist/web` beside the built CLI, or the package's `dist/web` when run from sources. */
export function assetsDir(): string | undefined {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const d of [join(here, 'web'), join(here, '..', '..', 'dist', 'web'), join(here, '..', 'dist', 'web')]) if (existsSync(join(d, 'index.html'))) return d;
  return undefined;
}

/** A file of the built page by URL path (`/` is `index.html`); undefined when there is none (or the path leaves the directory). */
export async function readAsset(dir: string, urlPath: string): Promise<{ body: Buffer; type: string } | undefined> {
  const rel = urlPath === '/' ? 'index.html' : decodeURIComponent(urlPath.slice(1));
  const file = normalize(join(dir, rel));
  if (!file.startsWith(dir + sep)) return undefined;
  const body = await readFile(file).catch(() => undefined);
  return body === undefined ? undefined : { body, type: TYPES[extname(file)] ?? 'application/octet-stream' };
}
