/** Where run journals live under a store prefix (a path or a URL). */

/** Directory of the journals under `prefix`: joined with `/`, never collapsing `s3://`. */
export function journalDir(prefix: string): string {
  return `${prefix.replace(/\/+$/, '')}/.cairn/runs`;
}

/** The journal file of one run (it may not exist: a run with `journal: false`, or made before runners wrote journals). */
export function journalFile(prefix: string, runId: string): string {
  return `${journalDir(prefix)}/${runId}.jsonl`;
}
