/**
 * Submission ids: derived from the step's identity and attempt (`JobRequest.jobKey`:
 * `{nameWithHash}.{attempt}`), so the same attempt submitted twice — by a runner that died
 * between Ray accepting the job and recording it, then by the runner that took over — meets the
 * first job instead of starting a second one. A later run of the same attempt number (the step
 * failed, and is run again) takes the next generation: `…~2`, `…~3`.
 */

/** Characters kept as they are; anything else becomes `_` (Ray puts the id in paths and URLs). */
const SAFE = /[^A-Za-z0-9._-]/g;

/** The first-generation submission id of `jobKey`. */
export function submissionId(prefix: string, jobKey: string): string {
  return `${prefix}-${jobKey.replace(SAFE, '_')}`;
}

/** Generation `n` (1-based) of `base`. */
export function generation(base: string, n: number): string {
  return n <= 1 ? base : `${base}~${n}`;
}

/** Every generation of `base` among `ids`, highest first. */
export function generationsOf(base: string, ids: Iterable<string>): { readonly id: string; readonly n: number }[] {
  const out: { id: string; n: number }[] = [];
  for (const id of ids) {
    if (id === base) out.push({ id, n: 1 });
    else if (id.startsWith(`${base}~`)) {
      const n = Number(id.slice(base.length + 1));
      if (Number.isInteger(n) && n > 1) out.push({ id, n });
    }
  }
  return out.sort((a, b) => b.n - a.n);
}
