import type { CommitRequest, StagedAttempt, StoredState } from '../../src/index.js';
import type { RecordWant } from '../../src/store/store.js';
import { MemoryStore } from '../../src/index.js';
import type { LeaseHolder, LeaseInfo } from '../../src/store/leases.js';
import type { JobRecord } from '../../src/store/records.js';

/** A MemoryStore whose every operation answers with a promise, as a network store's would. */
export class AsyncMemoryStore extends MemoryStore {
  override readStates(paths: readonly string[], withRecord: readonly RecordWant[] | RecordWant): Promise<StoredState[]> {
    return Promise.resolve(super.readStates(paths, withRecord));
  }
  override createLease(path: string, holder: LeaseHolder): Promise<boolean> {
    return Promise.resolve(super.createLease(path, holder));
  }
  override readLease(path: string): Promise<LeaseInfo | null> {
    return Promise.resolve(super.readLease(path));
  }
  override refreshLease(path: string, holder: LeaseHolder): Promise<boolean> {
    return Promise.resolve(super.refreshLease(path, holder));
  }
  override breakLease(path: string, observed: LeaseInfo): Promise<boolean> {
    return Promise.resolve(super.breakLease(path, observed));
  }
  override releaseLease(path: string, holder: LeaseHolder): Promise<void> {
    return Promise.resolve(super.releaseLease(path, holder));
  }
  override stage(path: string, holder: LeaseHolder, attempt: number): Promise<StagedAttempt> {
    return Promise.resolve(super.stage(path, holder, attempt));
  }
  override commit(path: string, holder: LeaseHolder, request: CommitRequest): Promise<void> {
    return Promise.resolve().then(() => super.commit(path, holder, request));
  }
  override writeJob(path: string, job: JobRecord): Promise<void> {
    return Promise.resolve(super.writeJob(path, job));
  }
  override readJob(path: string): Promise<JobRecord | null> {
    return Promise.resolve(super.readJob(path));
  }
}
