/**
 * The remote work directory (code bundles, job dirs, workers) must be the login user's alone.
 * Whoever can write it, or replace it, can plant code that the next step runs as that user,
 * and read every task's inputs. So it defaults to a directory under the user's home
 * (`~/.cache/cairn`, created 0700, never a predictable name in the world-writable temp
 * directory), and any work dir, configured or default, is refused unless:
 * - it is a directory owned by the login user, not writable by group or others (a symlink is
 *   judged by its target, and the link itself must be the user's or root's);
 * - every directory above it is owned by the user or root and not writable by others, unless
 *   sticky (`/tmp` is fine as a parent: nobody else can rename what is in it).
 * Everything the executor creates there is created with umask 077.
 */
import { posix } from 'node:path';
import { CairnError } from '@cairn/core';
import type { HostConnection } from './connection.js';
import { shScript } from './quote.js';

/** The work dir used when a host configures none: under the login user's home. */
export const DEFAULT_WORK_DIR = '~/.cache/cairn';

/**
 * Resolves and creates (umask 077) the work dir `$1` (`~/…` is relative to `$HOME`), then prints
 * `me <uid>`, the mode and owner of the dir (`dir`, and `target` for a symlink's target) and of
 * each directory above it (`parent`, innermost first), and last `::path::` and the absolute path:
 * the decision is made, and tested, in TypeScript. Paths are never printed inside the lines
 * (a work dir may hold spaces or newlines); globbing is off for the field splitting.
 */
export const WORKDIR_SCRIPT = [
  'set -f',
  'd="$1"',
  'case "$d" in "~/"*) [ -n "$HOME" ] && [ -d "$HOME" ] || { echo "nohome $HOME"; exit 0; }; d="$HOME/${d#"~/"}";; esac',
  'case "$d" in /*) ;; *) echo relative; exit 0;; esac',
  'if [ ! -e "$d" ] && [ ! -L "$d" ]; then mkdir -p -- "$d" 2>/dev/null || { echo mkdir; exit 0; }; fi',
  'echo "me $(id -u)"',
  'modeof() { set -- $(ls -ldn "$@" 2>/dev/null); echo "$1 $3"; }',
  'echo "dir $(modeof -- "$d")"',
  'if [ -L "$d" ]; then echo "target $(modeof -L -- "$d")"; fi',
  'p="$d"',
  'while [ "$p" != / ] && [ "$p" != . ]; do p=$(dirname -- "$p"); echo "parent $(modeof -- "$p")"; done',
  "printf '%s\\n%s' '::path::' \"$d\"",
].join('\n');

/** One mode line: mode string and owner uid. */
interface Entry {
  readonly mode: string;
  readonly uid: number;
}

function parseMode(text: string): Entry | undefined {
  const m = /^([-dlbcps][-rwxsStT]{9})\S* (\d+)$/.exec(text.trim());
  return m ? { mode: m[1] as string, uid: Number(m[2]) } : undefined;
}

const groupWritable = (mode: string) => mode[5] === 'w';
const otherWritable = (mode: string) => mode[8] === 'w';
const sticky = (mode: string) => mode[9] === 't' || mode[9] === 'T';

/** What {@link judgeWorkDir} decides: the absolute work dir, or why it is refused. */
export type WorkDirVerdict = { readonly ok: true; readonly dir: string } | { readonly ok: false; readonly why: string };

/** Decides from {@link WORKDIR_SCRIPT}'s output whether the work dir is safe (pure: tested directly). */
export function judgeWorkDir(output: string, configured: string): WorkDirVerdict {
  const i = output.indexOf('\n::path::\n');
  const at = i < 0 ? -1 : i + 1;
  const lines = (at >= 0 ? output.slice(0, at) : output).split('\n').filter((l) => l !== '');
  const first = lines[0] ?? '';
  if (first.startsWith('nohome')) return { ok: false, why: `the login user has no home directory (HOME=${first.slice(7) || 'unset'}) for the default ${configured}` };
  if (first === 'relative') return { ok: false, why: 'it is not an absolute path' };
  if (first === 'mkdir') return { ok: false, why: 'it cannot be created (a parent is missing or not writable by the login user)' };
  const me = /^me (\d+)$/.exec(first);
  const dirLine = lines.find((l) => l.startsWith('dir '));
  const dir = dirLine === undefined ? undefined : parseMode(dirLine.slice(4));
  if (!me || at < 0 || !dir) return { ok: false, why: `its owner and mode could not be read (${output.trim().slice(0, 200) || 'no output'})` };
  const path = posix.normalize(output.slice(at + '::path::\n'.length));
  const uid = Number(me[1]);
  let entry = dir;
  if (dir.mode.startsWith('l')) {
    if (dir.uid !== uid && dir.uid !== 0) return { ok: false, why: `it is a symbolic link owned by uid ${dir.uid}, not by the login user (uid ${uid})` };
    const target = lines.find((l) => l.startsWith('target '));
    const t = target === undefined ? undefined : parseMode(target.slice(7));
    if (!t) return { ok: false, why: 'it is a symbolic link to nothing readable' };
    entry = t;
  }
  if (!entry.mode.startsWith('d')) return { ok: false, why: 'it is not a directory' };
  if (entry.uid !== uid) return { ok: false, why: `it is owned by uid ${entry.uid}, not by the login user (uid ${uid}): its owner could plant code that your steps run` };
  if (groupWritable(entry.mode) || otherWritable(entry.mode)) {
    return { ok: false, why: `it is writable by ${otherWritable(entry.mode) ? 'other users' : 'its group'} (mode ${entry.mode}): they could plant code that your steps run` };
  }
  let parentPath = path;
  for (const l of lines.filter((x) => x.startsWith('parent '))) {
    parentPath = posix.dirname(parentPath);
    const p = parseMode(l.slice(7));
    if (!p) return { ok: false, why: `the directory above it, ${parentPath}, could not be checked` };
    if (p.uid !== uid && p.uid !== 0) return { ok: false, why: `the directory above it, ${parentPath}, is owned by uid ${p.uid} (neither the login user nor root), who could replace it` };
    if (otherWritable(p.mode) && !sticky(p.mode)) return { ok: false, why: `the directory above it, ${parentPath}, is writable by other users without the sticky bit (mode ${p.mode}), so they could replace it` };
  }
  const clean = path.replace(/\/+$/, '');
  return { ok: true, dir: clean === '' ? '/' : clean };
}

/**
 * Resolves, creates (0700) and checks the work dir of one host; returns its absolute path.
 * An unsafe one is `CAIRN_UNSAFE_DIR` naming the host, the directory and the fix.
 */
export async function prepareWorkDir(conn: HostConnection, configured: string | undefined, timeoutMs: number): Promise<string> {
  const spec = configured ?? DEFAULT_WORK_DIR;
  const r = await conn.exec(shScript(WORKDIR_SCRIPT, [spec]), { timeoutMs });
  if (r.code !== 0) throw new CairnError('CAIRN_REMOTE', `SSH host "${conn.target.name}": checking workDir ${spec} failed (exit ${r.code}): ${r.stderr.trim()}`, { retryable: true });
  const verdict = judgeWorkDir(r.stdout.toString('utf8'), spec);
  if (verdict.ok) return verdict.dir;
  const fix =
    configured === undefined
      ? `Fix the directory (chown ${conn.target.user} it, chmod 700 it), or set workDir to a directory only ${conn.target.user} can write.`
      : `Use a directory only ${conn.target.user} can write, e.g. leave workDir out for ${DEFAULT_WORK_DIR}, or fix this one (chown ${conn.target.user}, chmod 700).`;
  throw new CairnError('CAIRN_UNSAFE_DIR', `SSH host "${conn.target.name}": refusing workDir ${JSON.stringify(spec)}: ${verdict.why}. ${fix}`);
}
