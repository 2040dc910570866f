/**
 * What tools (the CLI's status, logs, explain, clean, unlock, report) read of an S3 store: the
 * steps under a prefix, files, removal. A store keeps no index, so steps are found from one flat
 * listing of the prefix (1,000 keys a request): a directory whose keys include a status, a record,
 * a lease or attempt logs is a step. A step's metadata names start with `.`, so they sort before
 * most output files: once a page ends inside a known step's outputs, the listing jumps past that
 * step (`StartAfter`), and a step with many output files costs one request more, not its files.
 */
import { CairnError } from '@cairn/core';
import type { CheckpointSummary, FoundStep, ListedFile, StoreBrowser } from '@cairn/runner/store';
import { CHECKPOINT_HEAD, checkpointPrefix, parseHead } from './checkpoint-layout.js';
import { CheckpointPresence } from './checkpoint-presence.js';
import { attemptOf } from './attempts.js';
import { LEASE_FILE, RECORD_FILE, STATUS_FILE } from './layout.js';
import type { S3Objects } from './objects.js';
import { dirKey, parseS3Url, s3Url } from './url.js';

/** The greatest UTF-8 code point: `StartAfter: dir + MAX` skips every key under `dir`. */
const MAX = '\u{10FFFF}';
/** Metadata names that make a directory a step. */
const MARKERS = new Set([STATUS_FILE, RECORD_FILE, LEASE_FILE]);
/** The greatest metadata name: keys of a step beyond `dir + LAST` are its outputs (or later logs). */
const LAST = [...MARKERS].reduce((a, b) => (a > b ? a : b));
/** What the store keeps under the prefix itself (probe objects, run journals): never steps. */
const OWN = '.cairn/';
/** Deletes in flight while removing a step. */
const DELETES = 16;

/** The step directory (relative, with its trailing `/`) a relative key marks, if it marks one. */
function markedDir(rel: string): { dir: string; lease: boolean } | undefined {
  const logs = rel.indexOf('/.cairn/logs/');
  if (logs > 0) return { dir: rel.slice(0, logs + 1), lease: false };
  const slash = rel.lastIndexOf('/');
  const name = rel.slice(slash + 1);
  if (slash <= 0 || !MARKERS.has(name)) return undefined;
  return { dir: rel.slice(0, slash + 1), lease: name === LEASE_FILE };
}

/** The found step directory that `rel` lies under, if any (steps are not looked for inside steps). */
function enclosing(found: ReadonlyMap<string, boolean>, rel: string): string | undefined {
  for (let i = rel.indexOf('/'); i > 0; i = rel.indexOf('/', i + 1)) {
    const d = rel.slice(0, i + 1);
    if (found.has(d)) return d;
  }
  return undefined;
}

/** The committed attempt prefix of a step directory (attempts.ts): null for the old layout, undefined when not built. */
export type CommittedPrefix = (bucket: string, dir: string) => Promise<string | null | undefined>;

/** Where an attempt's key lies: its step directory and its prefix (`@run/`), when `key` has a `/@…/` segment. */
function attemptKeyOf(key: string): { dir: string; prefix: string } | undefined {
  for (let i = key.indexOf('/@'); i >= 0; i = key.indexOf('/@', i + 1)) {
    const prefix = attemptOf(key.slice(i + 1));
    if (prefix !== undefined) return { dir: key.slice(0, i + 1), prefix };
  }
  return key.startsWith('@') && attemptOf(key) !== undefined ? { dir: '', prefix: attemptOf(key) as string } : undefined;
}

/** The S3 store's {@link StoreBrowser}. */
export class S3Browser implements StoreBrowser {
  readonly #objects: S3Objects;
  readonly #committed: CommittedPrefix;
  readonly #presence: CheckpointPresence;

  /** `committed`: how listings tell the committed attempt's objects from others (a step's record). */
  constructor(objects: S3Objects, committed: CommittedPrefix) {
    this.#objects = objects;
    this.#committed = committed;
    this.#presence = new CheckpointPresence(objects);
  }

  async findSteps(prefix: string, maxDepth: number): Promise<readonly FoundStep[]> {
    const loc = parseS3Url(prefix);
    const base = dirKey(loc.key);
    const found = new Map<string, boolean>();
    let startAfter: string | undefined;
    let token: string | undefined;
    for (;;) {
      const page = await this.#objects.list(loc.bucket, { prefix: base, startAfter, continuationToken: token });
      for (const o of page.objects) {
        const rel = o.key.slice(base.length);
        if (rel.startsWith(OWN)) continue;
        const m = markedDir(rel);
        if (m === undefined || m.dir.split('/').length - 1 > maxDepth) continue;
        const outer = enclosing(found, m.dir);
        if (outer !== undefined && outer !== m.dir) continue;
        found.set(m.dir, (found.get(m.dir) ?? false) || m.lease);
      }
      if (!page.truncated) break;
      const lastRel = (page.objects.at(-1)?.key ?? '').slice(base.length);
      const inside = lastRel.startsWith(OWN) ? OWN : enclosing(found, lastRel);
      if (inside !== undefined && (inside === OWN || lastRel > inside + LAST)) {
        startAfter = base + inside + MAX;
        token = undefined;
      } else {
        startAfter = undefined;
        token = page.next;
        if (token === undefined) break;
      }
    }
    return [...found]
      .map(([dir, leased]) => ({ path: s3Url({ bucket: loc.bucket, key: base + dir.slice(0, -1) }), leased }))
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /** The files under `dir`; of a step's attempt prefixes only the committed one (the others are unpublished or being removed). */
  async listFiles(dir: string): Promise<readonly ListedFile[]> {
    const loc = parseS3Url(dir);
    const out: ListedFile[] = [];
    const committed = new Map<string, Promise<string | null | undefined>>();
    let token: string | undefined;
    do {
      const page = await this.#objects.list(loc.bucket, { prefix: dirKey(loc.key), continuationToken: token });
      for (const o of page.objects) {
        const a = attemptKeyOf(o.key);
        if (a !== undefined) {
          let c = committed.get(a.dir);
          if (c === undefined) committed.set(a.dir, (c = this.#committed(loc.bucket, a.dir)));
          if ((await c) !== a.prefix) continue;
        }
        out.push({ path: s3Url({ bucket: loc.bucket, key: o.key }), lastModified: o.lastModified });
      }
      token = page.truncated ? page.next : undefined;
    } while (token !== undefined);
    return out;
  }

  async readFile(path: string): Promise<Uint8Array | null> {
    const loc = parseS3Url(path);
    return (await this.#objects.get(loc.bucket, loc.key))?.body ?? null;
  }

  async writeFile(path: string, data: string | Uint8Array): Promise<void> {
    const loc = parseS3Url(path);
    await this.#objects.put(loc.bucket, loc.key, data, path.endsWith('.json') || path.endsWith('.jsonl') ? 'application/json' : 'application/octet-stream');
  }

  /** The checkpoints of the step at `path` (checkpoint-layout.ts): a share of one LIST per directory of steps asked at once, and a GET of the head when there is one. */
  async checkpoints(path: string): Promise<CheckpointSummary | null> {
    const loc = parseS3Url(path);
    const prefix = checkpointPrefix(loc.key);
    if (!(await this.#presence.has(loc.bucket, prefix))) return null;
    const root = s3Url({ bucket: loc.bucket, key: prefix.slice(0, -1) });
    const got = await this.#objects.get(loc.bucket, prefix + CHECKPOINT_HEAD);
    const head = got === null ? null : parseHead(got.body.toString('utf8'));
    // Objects without a head: what a run left before its first push completed.
    if (head === null) return { root, generation: 0, files: 0, bytes: 0 };
    return { root, generation: head.generation, files: head.files.length, bytes: head.files.reduce((n, f) => n + f.size, 0) };
  }

  async remove(path: string): Promise<void> {
    const loc = parseS3Url(path);
    const dir = dirKey(loc.key);
    if (dir === '') throw new CairnError('CAIRN_STORE', `Refusing to remove ${path}: it is a whole bucket, not a step.`);
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.#objects.list(loc.bucket, { prefix: dir, continuationToken: token });
      for (const o of page.objects) keys.push(o.key);
      token = page.truncated ? page.next : undefined;
    } while (token !== undefined);
    // The status goes first (a half-removed step never reads as built), the lease last.
    const status = keys.filter((k) => k === dir + STATUS_FILE);
    const lease = keys.filter((k) => k === dir + LEASE_FILE);
    const rest = keys.filter((k) => k !== dir + STATUS_FILE && k !== dir + LEASE_FILE);
    for (const k of status) await this.#objects.delete(loc.bucket, k);
    let next = 0;
    const worker = async () => {
      while (next < rest.length) await this.#objects.delete(loc.bucket, rest[next++] as string);
    };
    await Promise.all(Array.from({ length: Math.min(DELETES, rest.length) }, worker));
    for (const k of lease) await this.#objects.delete(loc.bucket, k);
  }
}
