/**
 * Where a step's checkpoints live in the bucket: beside its output, under the same name as on a
 * filesystem store (runner/src/store/local/layout.ts), never inside the output:
 *
 * ```
 * {parent}/.{base}.cairn-checkpoints/head.json          the current generation (below)
 * {parent}/.{base}.cairn-checkpoints/{runId}/{n}/{file}  the files one run pushed, push n
 * ```
 *
 * The head is the only truth: a file is a checkpoint of the step when the head names its key and
 * ETag. It is written after the files it names are uploaded, and only by a conditional write on
 * the ETag its writer last saw (checkpoint-sync.ts), so a runner that lost the step cannot
 * replace the head of the runner that took it over.
 */
import { dirKey } from './url.js';

/** The head object's name under the checkpoint prefix. */
export const CHECKPOINT_HEAD = 'head.json';

/** One file of a checkpoint generation. */
export interface CheckpointFile {
  /** Its path under the checkpoint directory, `/`-separated. */
  readonly path: string;
  /** Its object key, relative to the checkpoint prefix. */
  readonly key: string;
  /** Size in bytes. */
  readonly size: number;
  /** The object's (unquoted) ETag: a download is made only while it still has it. */
  readonly etag: string;
}

/** The head object: the step's current checkpoint generation. */
export interface CheckpointHead {
  /** Format version. */
  readonly cairn: 1;
  /** Generation number: one more each time a run takes the step over and resumes. */
  readonly generation: number;
  /** The run id of the runner that writes this generation. */
  readonly run: string;
  /** The complete checkpoint files. */
  readonly files: readonly CheckpointFile[];
}

/** The checkpoint prefix (a directory key) of the step directory key `stepDirKey` (`a/b/step/` → `a/b/.step.cairn-checkpoints/`). */
export function checkpointPrefix(stepDirKey: string): string {
  const dir = dirKey(stepDirKey).slice(0, -1);
  const slash = dir.lastIndexOf('/');
  return `${dir.slice(0, slash + 1)}.${dir.slice(slash + 1)}.cairn-checkpoints/`;
}

/** The head's text. */
export function headText(head: CheckpointHead): string {
  return `${JSON.stringify(head, null, 2)}\n`;
}

/** Parses a head; null when it is not one (a foreign or damaged object). */
export function parseHead(text: string): CheckpointHead | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  const h = v as Partial<CheckpointHead> | null;
  if (h === null || typeof h !== 'object' || h.cairn !== 1 || typeof h.generation !== 'number' || typeof h.run !== 'string' || !Array.isArray(h.files)) return null;
  for (const f of h.files as unknown[]) {
    const e = f as Partial<CheckpointFile> | null;
    if (e === null || typeof e !== 'object' || typeof e.path !== 'string' || typeof e.key !== 'string' || typeof e.size !== 'number' || typeof e.etag !== 'string') return null;
  }
  return h as CheckpointHead;
}
