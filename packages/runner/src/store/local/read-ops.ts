/** Reading steps' states from the local store: the status file, and the record when asked. */
import { recordHead } from '../record-head.js';
import { parseRecord } from '../records.js';
import { parseStatus, type StatusToken } from '../status.js';
import type { RecordWant, StoredState } from '../store.js';
import type { Io } from './io.js';
import { localPath, recordFile, statusFile } from './layout.js';

type Op<T> = Generator<unknown, T, unknown>;

/**
 * The state of a status (and record) read from disk; `undefined` record text: not asked for.
 * `'head'` reads only the record's identity fields (record-head.ts: no parse of the whole record).
 */
function stateFrom(statusText: string | null, recordText: string | null | undefined, want: RecordWant): StoredState {
  let status: StatusToken | null = null;
  let problem: string | undefined;
  if (statusText !== null) {
    const p = parseStatus(statusText);
    status = p.status;
    problem = p.problem;
  }
  if (recordText === undefined) return problem ? { status, problem } : { status };
  if (recordText === null) return problem ? { status, record: null, problem } : { status, record: null };
  if (want === 'head') {
    const h = recordHead(recordText);
    const pr = problem ?? h.problem;
    return pr ? { status, head: h.head, problem: pr } : { status, head: h.head };
  }
  const r = parseRecord(recordText);
  const pr = problem ?? r.problem;
  return pr ? { status, record: r.record, problem: pr } : { status, record: r.record };
}

/** One step's state; never throws (an unreadable file is a `problem`). */
export function* readOne(io: Io, path: string, withRecord: RecordWant): Op<StoredState> {
  try {
    const dir = localPath(path);
    const statusText = (yield io.readText(statusFile(dir))) as string | null;
    // A record is read only where a status exists: no status, nothing built.
    const recordText = withRecord !== false ? (statusText !== null ? ((yield io.readText(recordFile(dir))) as string | null) : null) : undefined;
    return stateFrom(statusText, recordText, withRecord);
  } catch (err) {
    return { status: null, problem: `unreadable (${(err as Error).message})` };
  }
}
