/**
 * Earlier builds of a content-addressed step: the outputs beside its path of the same
 * name@version under other identities (`{name}/{version}-{other hash}`), and one at the
 * `{name}/{version}` path of the versioned layout (Cairn before content addressing, Marin).
 * They say why a step will run (`plan`: "smoothing: 0.5 -> 5 since the last build") and find
 * outputs of the older layout that a run would not reuse. Read only where a person asks or a
 * warning is due; each directory is listed once per run, through the optional `Store.list`.
 */
import { describeDrift, joinPath, type StepSpec } from '@cairn/core';
import type { ArtifactRecord } from '../store/records.js';
import type { Store } from '../store/store.js';

/** One earlier build. */
export interface EarlierBuild {
  readonly path: string;
  readonly record: ArtifactRecord;
  /** At the versioned layout's `{name}/{version}` path (not content-addressed). */
  readonly versioned: boolean;
}

const HASH = /^[0-9a-f]{16}$/;

/** The parent of a step's path and the name its output has there. */
function split(path: string): [string, string] {
  const slash = path.lastIndexOf('/');
  return [path.slice(0, slash), path.slice(slash + 1)];
}

/** Finds earlier builds with one listing per directory. */
export class EarlierBuilds {
  readonly #store: Store;
  readonly #listings = new Map<string, Promise<readonly string[]>>();

  constructor(store: Store) {
    this.#store = store;
  }

  /** True when this store can be asked. */
  get available(): boolean {
    return this.#store.list !== undefined;
  }

  /** True when `spec` is a step whose earlier builds can be found: lazy, content-addressed, not mutable. */
  static applies(spec: StepSpec): boolean {
    return spec.version !== undefined && !spec.fixedPath && !spec.mutable;
  }

  #list(dir: string): Promise<readonly string[]> {
    let listing = this.#listings.get(dir);
    if (listing === undefined) {
      listing = Promise.resolve(this.#store.list?.(dir) ?? []).catch(() => []);
      this.#listings.set(dir, listing);
    }
    return listing;
  }

  /** The build of `spec` (at `path`, content-addressed) at its versioned path with this very identity, if there is one (one listing per directory, one read when it is there). */
  async sameAtVersioned(spec: StepSpec, path: string): Promise<EarlierBuild | undefined> {
    if (!EarlierBuilds.applies(spec) || !this.available) return undefined;
    const [dir] = split(path);
    const version = spec.version as string;
    if (!(await this.#list(dir)).includes(version)) return undefined;
    const at = joinPath(dir, version);
    const [st] = await this.#store.readStates([at], true);
    const record = st?.record;
    return st?.status === 'SUCCESS' && record && record.nameWithHash === spec.nameWithHash ? { path: at, record, versioned: true } : undefined;
  }

  /** Successful earlier builds of `spec` (at `path`), newest first; the versioned one included only when `versioned`. */
  async of(spec: StepSpec, path: string, versioned = true): Promise<EarlierBuild[]> {
    if (!EarlierBuilds.applies(spec) || !this.available) return [];
    const [dir, own] = split(path);
    const version = spec.version as string;
    const names = (await this.#list(dir)).filter((n) => n !== own && (n === version ? versioned : n.startsWith(`${version}-`) && HASH.test(n.slice(version.length + 1))));
    if (names.length === 0) return [];
    const paths = names.map((n) => joinPath(dir, n));
    const states = await this.#store.readStates(paths, true);
    const out: EarlierBuild[] = [];
    states.forEach((st, i) => {
      const record = st.record;
      if (st.status === 'SUCCESS' && record && record.name === spec.name && record.version === version) out.push({ path: paths[i] as string, record, versioned: names[i] === version });
    });
    return out.sort((a, b) => (b.record.timings?.end ?? 0) - (a.record.timings?.end ?? 0));
  }
}

/** Why `spec` differs from an earlier build of it: its own config's diff, or the dependencies that changed. */
export function changesSince(spec: StepSpec, earlier: ArtifactRecord): string[] {
  if (earlier.fingerprint !== spec.fingerprint) return describeDrift(earlier.fingerprintPayload ?? '', spec.fingerprintPayload ?? '');
  const had = earlier.depIdentities;
  if (!Array.isArray(had)) return ['a dependency changed'];
  const known = new Set(had);
  const changed = spec.deps.filter((d) => !known.has(d.nameWithHash)).map((d) => `dependency ${d.ident} changed`);
  return changed.length > 0 ? changed : [`its identity changed (was ${earlier.nameWithHash})`];
}
