/** The `withRecord` argument of `Store.readStates` for one path. */
import type { RecordWant } from './store.js';

/** What `withRecord` asks for `paths[i]`: one answer for all, or the i-th. */
export function recordWantAt(withRecord: readonly RecordWant[] | RecordWant, i: number): RecordWant {
  return typeof withRecord === 'object' ? (withRecord[i] ?? false) : withRecord;
}
