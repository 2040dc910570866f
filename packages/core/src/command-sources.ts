/**
 * A command step's project directory and declared sources: where relative sources (and the
 * program's working directory) are, and the content hash of each source that goes into the
 * step's identity. Every bad path is a `CAIRN_COMMAND_SOURCE` naming the step and the fix.
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getBackend } from './backend.js';
import { CairnError } from './errors.js';
import { describeValue } from './known-keys.js';

/**
 * The project directory of step `step`: `dir` as an absolute path (a `file:` URL or a file in
 * it, such as `import.meta.url`, names its directory), else the current working directory.
 */
export function projectDir(step: string, dir: unknown): string {
  if (dir === undefined) return process.cwd();
  let path: string;
  if (dir instanceof URL || (typeof dir === 'string' && dir.startsWith('file:'))) {
    try {
      path = fileURLToPath(dir as string | URL);
    } catch (cause) {
      throw new CairnError('CAIRN_COMMAND_SOURCE', `Step "${step}": dir ${String(dir)} is not a file URL; pass import.meta.dirname or an absolute path.`, { step, cause });
    }
  } else if (typeof dir === 'string' && dir.length > 0) {
    path = resolve(dir);
  } else {
    throw new CairnError('CAIRN_COMMAND_SOURCE', `Step "${step}": dir must be a directory path or file URL (import.meta.dirname, import.meta.url), got ${describeValue(dir)}.`, { step });
  }
  let isFile = false;
  try {
    const st = statSync(path);
    isFile = !st.isDirectory();
  } catch (cause) {
    throw new CairnError('CAIRN_COMMAND_SOURCE', `Step "${step}": its project directory ${path} does not exist; fix dir (relative sources and the program's working directory are resolved there).`, { step, cause });
  }
  return isFile ? dirname(path) : path;
}

/** XXH64 (16 hex digits) of a file's bytes. */
export function hashFile(path: string): string {
  return getBackend().xxh64Hex(readFileSync(path));
}

/**
 * Each declared source as `relative path → content hash`, sorted by path. A source is a path
 * relative to `dir` (or an absolute path inside it) naming a readable file; one that leaves
 * `dir`, is missing, unreadable or a directory is refused.
 */
export function hashSources(step: string, dir: string, sources: unknown): Record<string, string> {
  if (sources === undefined) return {};
  if (!Array.isArray(sources)) {
    throw new CairnError('CAIRN_COMMAND_SOURCE', `Step "${step}": sources must be an array of file paths such as ['train.py', 'configs/model.json'], got ${describeValue(sources)}.`, { step });
  }
  const out: Record<string, string> = {};
  for (let i = 0; i < sources.length; i++) {
    const given: unknown = sources[i];
    if (typeof given !== 'string' || given.length === 0 || given.includes('\0')) {
      throw new CairnError('CAIRN_COMMAND_SOURCE', `Step "${step}": sources[${i}] must be a non-empty file path, got ${describeValue(given)}.`, { step });
    }
    const abs = resolve(dir, given);
    const rel = relative(dir, abs);
    if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
      throw new CairnError(
        'CAIRN_COMMAND_SOURCE',
        `Step "${step}": source ${JSON.stringify(given)} is outside the project directory ${dir}; declare sources inside it (relative to it), or set dir to a directory that contains them.`,
        { step },
      );
    }
    let hash: string;
    try {
      if (statSync(abs).isDirectory()) {
        throw new CairnError('CAIRN_COMMAND_SOURCE', `Step "${step}": source ${JSON.stringify(given)} is a directory (${abs}); declare the files in it that the program reads.`, { step });
      }
      hash = hashFile(abs);
    } catch (cause) {
      if (cause instanceof CairnError) throw cause;
      const why = (cause as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : `cannot be read (${(cause as Error).message})`;
      throw new CairnError('CAIRN_COMMAND_SOURCE', `Step "${step}": source ${JSON.stringify(given)} ${why} at ${abs}; create it, fix the path (relative to ${dir}), or set dir.`, { step, cause });
    }
    out[rel.split(sep).join('/')] = hash;
  }
  return out;
}
