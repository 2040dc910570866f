/**
 * A run's note on outputs of the versioned layout that it does not reuse: a store written before
 * content addressing (Cairn before 0.2) holds `{name}/{version}` outputs that content-addressed
 * steps of the same identity do not look at, so they are rebuilt at `{name}/{version}-{hash}`.
 * The run says so once, naming some of them and the fix (`layout: 'versioned'`), without waiting:
 * the look-up runs beside the steps, a listing per directory and a read per match, capped.
 */
import type { StepSpec } from '@cairn/core';
import { type EarlierBuild, EarlierBuilds } from './earlier-builds.js';

/** Steps a run looks up at most (each costs a listing of a new directory, or nothing). */
const MAX_LOOKUPS = 1000;

export class LegacyNote {
  readonly #earlier: EarlierBuilds;
  readonly #found: { spec: StepSpec; build: EarlierBuild }[] = [];
  readonly #lookups: Promise<void>[] = [];

  constructor(earlier: EarlierBuilds) {
    this.#earlier = earlier;
  }

  /** Looks for an older-layout output of `spec`, which has nothing at `path`. */
  consider(spec: StepSpec, path: string): void {
    if (this.#lookups.length >= MAX_LOOKUPS || !this.#earlier.available || !EarlierBuilds.applies(spec)) return;
    this.#lookups.push(
      this.#earlier.sameAtVersioned(spec, path).then(
        (build) => void (build !== undefined && this.#found.push({ spec, build })),
        () => undefined,
      ),
    );
  }

  /** Once every look-up is done: the warning, or undefined when nothing was found. */
  async message(): Promise<string | undefined> {
    await Promise.all(this.#lookups);
    const n = this.#found.length;
    if (n === 0) return undefined;
    // Look-ups finish in any order: the note names the first few by path.
    this.#found.sort((a, b) => (a.build.path < b.build.path ? -1 : a.build.path > b.build.path ? 1 : 0));
    const some = this.#found.slice(0, 3).map(({ spec, build }) => `${spec.name}@${spec.version as string} at ${build.path}`);
    return (
      `${n}${this.#lookups.length >= MAX_LOOKUPS ? '+' : ''} step(s) have an output of the same identity at their versioned path {name}/{version} (${some.join(', ')}${n > 3 ? ', …' : ''}), ` +
      `written before content-addressed paths (Cairn before 0.2). This run builds them again at {name}/{version}-{hash}; the old outputs stay. ` +
      `To serve them instead, set layout: 'versioned' on those steps or on the runner (runner README, "Migrating a store").`
    );
  }
}
