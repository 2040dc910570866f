/**
 * The names under each directory of a growing set of paths, so that listing a directory costs
 * what it returns instead of a scan of every path (the memory store's `list`: a run asks it once
 * per step name for earlier builds, and a scan made the first 1,000 new steps of a large
 * streamed run cost 0.2 s).
 *
 * Paths are only added (a store that removes one makes a new index). An added path is queued,
 * one array push, and indexed at the next listing: a run that lists its first steps and then
 * adds a million more pays a push for each, not the indexing.
 */
export class DirIndex {
  /**
   * Each directory holding something → the names directly under it (of paths, and of directories
   * holding paths): the one name as a string until there is a second (most step directories
   * hold one build; a Set each made indexing a large store several times slower).
   */
  readonly #kids = new Map<string, string | Set<string>>();
  /** Paths added since the last listing. */
  #queued: string[] = [];

  /** Adds `path`. */
  add(path: string): void {
    this.#queued.push(path);
  }

  /** The names directly under `dir` (one trailing `/` ignored). */
  names(dir: string): string[] {
    if (this.#queued.length > 0) {
      for (const path of this.#queued) this.#index(path);
      this.#queued = [];
    }
    const kids = this.#kids.get(dir.endsWith('/') ? dir.slice(0, -1) : dir);
    return kids === undefined ? [] : typeof kids === 'string' ? [kids] : [...kids];
  }

  #index(path: string): void {
    for (let p = path; ; ) {
      const slash = p.lastIndexOf('/');
      if (slash < 0) return;
      const dir = p.slice(0, slash);
      const name = p.slice(slash + 1);
      const kids = this.#kids.get(dir);
      if (typeof kids === 'string') {
        if (kids !== name) this.#kids.set(dir, new Set([kids, name]));
        return;
      }
      if (kids !== undefined) {
        kids.add(name);
        return;
      }
      // A directory seen for the first time: its parent gains its name too.
      this.#kids.set(dir, name);
      p = dir;
    }
  }
}
