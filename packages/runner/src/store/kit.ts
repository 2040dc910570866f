/**
 * @cairn/runner/store — the kit for store plugin authors: the contract (types only), the file
 * formats every store shares (status token, record, lease holder) and the staleness rule.
 */
export { parseStatus, STATUS_FILE, STATUS_TOKENS } from './status.js';
export { attemptFilesIn, attemptOfLogName, logsDirIn } from './attempt-files.js';
export { parseRecord, parseJobRecord, RECORD_FILE, errorData } from './records.js';
export { isStale, judgeLease, leaseTiming, makeHolder, parseHolder, MARIN_LOCK_FILE } from './leases.js';
export { markerPath, markerText, parseStoreMarker, STORE_FORMAT_VERSION, STORE_MARKER_FILE } from './marker.js';
export type { StoreMarker } from './marker.js';

export type { AttemptLogs, CheckpointSummary, CommitRequest, FoundStep, Leftover, ListedFile, Maybe, RecordWant, StagedAttempt, StepAccessRef, StepStoreAccess, Store, StoreBrowser, StoreCapabilities, StoreFactory, StoredState } from './store.js';
export { recordHead } from './record-head.js';
export { recordWantAt } from './record-want.js';
export type { RecordHead } from './record-head.js';
export type { StatusToken, ParsedStatus } from './status.js';
export type { ArtifactRecord, AttemptRecord, DeferredRecord, ErrorData, JobRecord } from './records.js';
export type { LeaseHolder, LeaseInfo, LeaseOptions, LeaseTiming, LeaseVerdict } from './leases.js';
