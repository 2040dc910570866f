/**
 * The local store never follows a symbolic link where it expects a step directory. A link
 * planted at `{prefix}/name-hash` (or at a directory on the way to a pinned step) would make
 * the runner write the step's outputs, status and record wherever the link points, outside the
 * store. Each component from below the prefix down to the step directory is checked with
 * `lstat`; a missing one is fine (the store creates it). The prefix itself may be a link (the
 * user chose it), and so may anything at an absolute location outside the prefix (an absolute
 * pin is the user's explicit choice).
 */
import { CairnError } from '@cairn/core';
import type { Io, Stat } from './io.js';

/** The directories to check: from just below `prefix` down to `path`; none when `path` is outside `prefix`. */
function componentsBelow(prefix: string, path: string): string[] {
  let base = prefix;
  while (base.length > 1 && base.endsWith('/')) base = base.slice(0, -1);
  if (!path.startsWith(`${base}/`)) return [];
  const out: string[] = [];
  let at = base.length;
  while (at < path.length) {
    const next = path.indexOf('/', at + 1);
    const end = next < 0 ? path.length : next;
    if (end > at + 1) out.push(path.slice(0, end));
    at = end;
  }
  return out;
}

export function unsafe(dir: string, path: string, what: string, step: string | undefined): CairnError {
  const who = step === undefined ? '' : `Step "${step}": `;
  const role = dir === path ? 'its output directory' : `${dir}, on the way to its output directory ${path},`;
  return new CairnError(
    'CAIRN_UNSAFE_DIR',
    `${who}${role} is ${what}; the local store does not follow links or write through other files where it expects a step directory. Remove it (or move it away) and rerun; to keep outputs elsewhere, pin the step to an absolute path.`,
    { step },
  );
}

function cannotCheck(dir: string, cause: unknown, step: string | undefined): CairnError {
  return new CairnError('CAIRN_STORE', `${step === undefined ? '' : `Step "${step}": `}cannot check ${dir}: ${(cause as Error).message}. Check the store prefix is readable and writable.`, { step, cause });
}

/**
 * Throws `CAIRN_UNSAFE_DIR` when the step directory `path` inside the store at `prefix`, or a
 * directory between them, is a symbolic link or not a directory. One generator over the local
 * store's file calls, run synchronously or not (`drive`).
 */
export function* checkStepDir(io: Io, prefix: string, path: string, step?: string): Generator<unknown, void, unknown> {
  for (const dir of componentsBelow(prefix, path)) {
    let st: Stat | null;
    try {
      st = (yield io.lstat(dir)) as Stat | null;
    } catch (err) {
      throw cannotCheck(dir, err, step);
    }
    if (st === null) return; // the rest does not exist yet either
    if (st.symlink) throw unsafe(dir, path, `a symbolic link (to ${(yield io.readlink(dir)) as string})`, step);
    if (!st.dir) throw unsafe(dir, path, 'not a directory', step);
  }
}
