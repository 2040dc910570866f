import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { posix, resolve } from 'node:path';
import { CairnError } from './errors.js';
import { describeValue } from './known-keys.js';
import { RESERVED_SEGMENT } from './validate.js';

/** True for `gs://…`, `s3://…`, `file://…` and other URLs. */
export function hasScheme(p: string): boolean {
  return /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(p);
}

/** True for an absolute filesystem path or a URL: used as-is, never joined to a prefix. */
export function isAbsoluteLocation(p: string): boolean {
  return p.startsWith('/') || hasScheme(p);
}

// Control characters (C0, DEL, C1) never belong in a path.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Which option a step location came from, for messages. */
export type LocationKind = 'pin' | 'overrideOutputPath';

/**
 * Checks and normalises a step's fixed output location (`pin` of `apply`, `overrideOutputPath`
 * of `StepSpec`). Absolute paths and URLs are the user's explicit choice and are kept (an
 * absolute path is normalised: `//`, `.` and `..` collapsed, no trailing `/`). A relative
 * location is normalised the same way and must stay strictly inside the prefix: empty, `.`
 * (the prefix itself), anything that leaves it (`../x`, `a/../../x`), a `.cairn` segment
 * (Cairn's own files) and a leading `~` (never expanded) are refused with `CAIRN_INVALID_PATH`.
 */
export function checkLocation(kind: LocationKind, value: unknown, step: string): string {
  const fail = (why: string, fix: string): never => {
    const shown = typeof value === 'string' ? JSON.stringify(value) : describeValue(value);
    throw new CairnError('CAIRN_INVALID_PATH', `Step "${step}": ${kind} ${shown} ${why}; ${fix}`, { step });
  };
  if (typeof value !== 'string') return fail(`is ${value === null ? 'null' : `a ${typeof value}`}`, `give a path relative to the prefix (e.g. "${step}/v1") or an absolute one.`);
  if (CONTROL.test(value)) return fail('holds a control character', 'remove it.');
  if (!value.isWellFormed()) return fail('holds a lone surrogate', 'fix the text encoding.');
  if (hasScheme(value)) return value;
  if (value.startsWith('/')) {
    const abs = posix.normalize(value);
    return abs.length > 1 && abs.endsWith('/') ? abs.slice(0, -1) : abs;
  }
  if (value.trim() === '') return fail('is empty, which would make the prefix itself the step\'s directory', `give a path relative to the prefix (e.g. "${step}/v1"), or leave ${kind} out.`);
  // Any leading "~" ("~", "~/x", "~user/x"): a shell would expand it, Cairn never does in locations.
  if (value.startsWith('~')) return fail('starts with "~", which Cairn does not expand in step locations', 'give an absolute path, or a path relative to the prefix.');
  let rel = posix.normalize(value);
  while (rel.endsWith('/')) rel = rel.slice(0, -1);
  if (rel === '.' || rel === '') return fail('is the prefix itself once normalised', `give a path relative to the prefix (e.g. "${step}/v1"), or leave ${kind} out.`);
  if (rel === '..' || rel.startsWith('../')) return fail(`leaves the prefix (it normalises to "${rel}")`, 'keep relative locations inside the prefix, or give an absolute path if the step must write elsewhere.');
  if (rel.split('/').includes(RESERVED_SEGMENT)) return fail(`uses "${RESERVED_SEGMENT}", which is reserved for Cairn's own files`, 'choose another directory name.');
  return rel;
}

/** Kernel pseudo-filesystems: a store there never works (a prefix under /proc never returned). */
const PSEUDO_FS = ['/proc', '/sys'] as const;

/** The pseudo-filesystem `abs` lies in (`/proc`, `/sys`), or undefined. */
function pseudoFsOf(abs: string): string | undefined {
  return PSEUDO_FS.find((root) => abs === root || abs.startsWith(`${root}/`));
}

/**
 * `abs` with its nearest existing ancestor's symbolic links resolved (`/dev/fd/…` is under
 * /proc), so a link cannot lead a prefix into a pseudo-filesystem; `abs` when nothing resolves.
 */
function realAncestor(abs: string): string {
  let dir = abs;
  const rest: string[] = [];
  for (;;) {
    try {
      return posix.join(realpathSync(dir), ...rest.reverse());
    } catch {
      const parent = posix.dirname(dir);
      if (parent === dir) return abs;
      rest.push(posix.basename(dir));
      dir = parent;
    }
  }
}

/**
 * The store prefix to use, from an option, a flag, `CAIRN_PREFIX` or a config file (`from`
 * names which, for messages). The one resolver of prefixes: the runner and the CLI both call it.
 *
 * - A URL is kept as given (a `file://` URL is checked like the path it names).
 * - `~` and `~/…` are expanded to this user's home directory (`os.homedir()`: `$HOME`).
 * - Any other path is made absolute against `base` (the working directory; the CLI passes a
 *   config file's directory for the file's `prefix`).
 *
 * Refused with `CAIRN_INVALID_PATH`: a non-string, `''` or only whitespace (it made the working
 * directory the store), a control character, `~user/…` (other users' homes are not looked up),
 * and a path under `/proc` or `/sys`, also through a symbolic link (a store there never works).
 */
export function resolvePrefix(value: unknown, from = 'prefix', base?: string): string {
  const shown = typeof value === 'string' ? JSON.stringify(value) : describeValue(value);
  const fail = (why: string): never => {
    throw new CairnError('CAIRN_INVALID_PATH', `${from} ${shown} ${why}`);
  };
  if (typeof value !== 'string') return fail(`is ${value === null ? 'null' : `a ${typeof value}`}; give a directory (e.g. "./.cairn") or a URL (e.g. "s3://bucket/cairn").`);
  if (value.trim() === '') return fail('is empty, which would make the working directory the store; give a directory (e.g. "./.cairn") or a URL. (An unset shell variable, as in --prefix "$STORE", gives an empty prefix.)');
  if (CONTROL.test(value)) return fail('holds a control character; remove it.');
  if (!value.isWellFormed()) return fail('holds a lone surrogate; fix the text encoding.');
  let abs: string;
  if (hasScheme(value)) {
    if (!/^file:\/\//i.test(value)) return value;
    let path: string;
    try {
      path = decodeURIComponent(value.slice('file://'.length).replace(/^[^/]*/, ''));
    } catch {
      return fail('is not a valid file:// URL (a bad %-escape); give a plain path instead.');
    }
    abs = posix.normalize(path || '/');
  } else if (value === '~' || value.startsWith('~/')) abs = resolve(homedir(), `.${value.slice(1)}`);
  else if (value.startsWith('~')) return fail('starts with "~user", which Cairn does not expand; give the absolute path.');
  else abs = base === undefined ? resolve(value) : resolve(base, value);
  const pseudo = pseudoFsOf(abs) ?? pseudoFsOf(realAncestor(abs));
  if (pseudo !== undefined) return fail(`is under ${pseudo}, a kernel pseudo-filesystem where a store cannot live; give a directory on a real disk (e.g. "./.cairn").`);
  return hasScheme(value) ? value : abs;
}

/**
 * Joins a prefix and a relative path with exactly one `/` (Marin #6904: a trailing
 * slash on the prefix must not produce `//`).
 */
export function joinPath(prefix: string, rel: string): string {
  let r = rel;
  while (r.startsWith('/')) r = r.slice(1);
  if (r === '') return prefixBase(prefix, false);
  return prefixBase(prefix, true) + r;
}

/** The last prefix {@link prefixBase} normalised, and the result (a run joins one prefix to every step's path). */
let lastPrefix: string | undefined;
let lastBase = '';
let lastBare = '';

/**
 * @internal `prefix` without its trailing slashes (`withSlash` false), or as it goes before a relative
 * path: with exactly one `/` after it, none after a bare URL root such as `s3://`.
 */
export function prefixBase(prefix: string, withSlash: boolean): string {
  if (prefix !== lastPrefix) {
    let p = prefix;
    const schemeEnd = hasScheme(p) ? p.indexOf('://') + 3 : 0;
    while (p.length > schemeEnd && p.endsWith('/')) p = p.slice(0, -1);
    lastBare = p;
    lastBase = p.length === schemeEnd ? p : `${p}/`;
    lastPrefix = prefix;
  }
  return withSlash ? lastBase : lastBare;
}

/** Where {@link flatStepPath} assembles a path's bytes (grown when a path is longer). */
let pathBytes = Buffer.allocUnsafe(512);
const latin1Slice = Buffer.prototype.latin1Slice;

/**
 * @internal `${base}${name}-${hex}` as one flat string, where `hex` is the 16 bytes of `digests`
 * at `16 * i`; undefined when `base` or `name` has a character above U+00FF (the caller then
 * concatenates). A run makes every step's path once and hashes it several times: a
 * concatenation is a tree of strings that V8 copies into a flat one on the first hash and
 * keeps both; this builds the flat string directly.
 */
export function flatStepPath(base: string, name: string, digests: Uint8Array, i: number): string | undefined {
  const nb = base.length;
  const nn = name.length;
  const n = nb + nn + 17;
  if (n > pathBytes.length) pathBytes = Buffer.allocUnsafe(2 * n);
  const b = pathBytes;
  let p = 0;
  for (let k = 0; k < nb; k++) {
    const c = base.charCodeAt(k);
    if (c > 0xff) return undefined;
    b[p++] = c;
  }
  for (let k = 0; k < nn; k++) {
    const c = name.charCodeAt(k);
    if (c > 0xff) return undefined;
    b[p++] = c;
  }
  b[p++] = 0x2d; // '-'
  for (let k = 16 * i, end = k + 16; k < end; k++) b[p++] = digests[k] as number;
  return latin1Slice.call(b, 0, p) as string;
}
