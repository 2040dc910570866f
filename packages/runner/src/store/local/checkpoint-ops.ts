/**
 * Checkpoint directories of the local store: `{parent}/.{base}.cairn-checkpoints/gen-{G}/`
 * beside the step's output (layout.ts), outside every staged attempt and never published.
 *
 * Opened lazily: a step gets its directory when it first asks for it (`ctx.checkpointDir`, a
 * command, a task sent to a worker: `openCheckpoints`), so a step that never does pays nothing.
 *
 * Fencing: a run that takes the step (the first of its attempts that asks) starts generation
 * G+1 — a copy of generation G's complete checkpoints (entries whose name does not start with a
 * dot), made under a hidden name and renamed into place only after checking the lease is still
 * its own — and removes the older generations. Its retries reuse it; an adopted job keeps the
 * generation it was started with. A zombie attempt (a runner paused past its lease, a lost host)
 * keeps the path of an older generation: whatever it writes there after the takeover is never
 * copied forward and never read again, so the new attempt never resumes from a zombie's write.
 * What a zombie was half-way through at the moment of the takeover is left out only if the
 * program wrote it under a dot-name first (write `.ckpt-4.tmp`, then rename to `ckpt-4`): the
 * same rule that makes a checkpoint survive a crash mid-write.
 */
import { CairnError, isCairnError } from '@cairn/core';
import type { LeaseHolder } from '../leases.js';
import type { Io } from './io.js';
import { checkpointRoot, tmpName } from './layout.js';
import { leaseLost, leaseToken } from './lease-ops.js';

type Op<T> = Generator<unknown, T, unknown>;

const GENERATION = /^gen-(\d+)$/;

/** `CAIRN_CHECKPOINT` for a checkpoint directory the store cannot make (the lifecycle adds the step's name). */
function checkpointError(what: string, path: string, cause: unknown): CairnError {
  const code = (cause as NodeJS.ErrnoException).code ?? 'error';
  return new CairnError('CAIRN_CHECKPOINT', `cannot ${what} the checkpoint directory ${path} (${code}: ${(cause as Error).message}). Make the store's directory writable (permissions, a read-only mount, a full disk), or choose another prefix.`, { cause });
}

/** Starts a new checkpoint generation of the step at `path` for `holder` (see the module comment); returns its directory. */
export function* newGeneration(io: Io, path: string, holder: LeaseHolder): Op<string> {
  const root = checkpointRoot(path);
  let target = root;
  try {
    // The common case, a step that has no checkpoints yet: two mkdirs and the lease check (a
    // cold local run pays them per step; bench row "local disk, cold").
    if ((yield io.mkdir(root, false)) as boolean) {
      target = `${root}/gen-1`;
      yield io.mkdir(target, false);
      yield* fenceGeneration(io, path, holder, undefined);
      return target;
    }
    const names = (yield io.readdir(root)) as string[];
    let last = 0;
    for (const n of names) {
      const m = GENERATION.exec(n);
      if (m !== null) last = Math.max(last, Number(m[1]));
      // A copy a dead taker left half-made.
      else if (n.startsWith('.gen-')) yield io.rmrf(`${root}/${n}`);
    }
    const gen = `${root}/gen-${last + 1}`;
    target = gen;
    const tmp = tmpName(`${root}/.gen-${last + 1}`);
    if (last > 0) yield io.copyTree(`${root}/gen-${last}`, tmp);
    else yield io.mkdir(tmp, false);
    // Only the lease holder's generation becomes the current one.
    yield* fenceGeneration(io, path, holder, tmp);
    yield io.rename(tmp, gen);
    for (const n of names) if (GENERATION.test(n) && n !== `gen-${last + 1}`) yield io.rmrf(`${root}/${n}`);
    return gen;
  } catch (err) {
    if (isCairnError(err)) throw err;
    throw checkpointError('create', target, err);
  }
}

/** Throws CAIRN_LEASE_LOST (removing `drop`) unless the lease is still `holder`'s. */
function* fenceGeneration(io: Io, path: string, holder: LeaseHolder, drop: string | undefined): Op<void> {
  const token = yield* leaseToken(io, path);
  if (token === holder.token) return;
  if (drop !== undefined) yield io.rmrf(drop);
  throw leaseLost(path, token);
}

/**
 * Removes the step's checkpoint directory (after its SUCCESS is published; `gen` its current
 * generation, undefined when this run never opened one: an earlier run's may still be there); a
 * failure leaves it for `cairn clean`.
 */
export function* removeCheckpoints(io: Io, path: string, gen: string | undefined): Op<void> {
  const root = checkpointRoot(path);
  try {
    // A step that never asked: one lstat that finds nothing, without an exception (rmSync's
    // ENOENT costs ~9 µs a step: bench row "cold run vs store floor (tmpfs)").
    if (gen === undefined) {
      if ((yield io.lstat(root)) !== null) yield io.rmrf(root);
      return;
    }
    // An empty generation alone in the directory (a step that wrote no checkpoint): two rmdirs.
    if ((yield io.rmdir(gen)) as boolean && (yield io.rmdir(root)) as boolean) return;
    yield io.rmrf(root);
  } catch {
    // The output is published: a leftover checkpoint directory is only space (cairn clean removes it).
  }
}
