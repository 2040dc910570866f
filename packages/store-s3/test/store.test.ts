import { hostname } from 'node:os';
import type { ArtifactRecord, LeaseHolder } from '@cairn/runner/store';
import { describe, expect, it } from 'vitest';
import { S3Store } from '../src/index.js';
import { clientOptions, freshPrefix, haveRgw, useGateway } from './helpers.js';

const holder = (token: string): LeaseHolder => ({ worker_id: `${hostname()}-${process.pid}-r`, timestamp: Date.now() / 1000, host: hostname(), pid: process.pid, processStartTime: null, runId: 'r', token });
const record = { cairn: 1, name: 'x', status: 'SUCCESS' } as unknown as ArtifactRecord;
const success = { status: 'SUCCESS' as const, record: { build: () => record } };

describe.skipIf(!haveRgw)('S3Store lease bookkeeping against a real RADOS Gateway', () => {
  const gw = useGateway();

  it('a commit racing the heartbeat’s refresh of its lease is not mistaken for a lost lease', { timeout: 60_000 }, async () => {
    // Found by the benchmark: the fence listed the lease while a refresh was replacing its ETag.
    const store = new S3Store(clientOptions(gw.get()));
    const prefix = freshPrefix(gw.get());
    const paths = Array.from({ length: 40 }, (_, i) => `${prefix}/s${i}-0123`);
    await Promise.all(paths.map((p) => store.createLease(p, holder(`t-${p}`))));
    const results = await Promise.allSettled(paths.map((p) => Promise.all([store.refreshLease(p, holder(`t-${p}`)), store.commit(p, holder(`t-${p}`), success)])));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    const states = await store.readStates(paths, false);
    expect(states.every((s) => s.status === 'SUCCESS')).toBe(true);
    await Promise.all(paths.map((p) => store.releaseLease(p, holder(`t-${p}`))));
    expect((await Promise.all(paths.map((p) => store.readLease(p)))).every((l) => l === null)).toBe(true);
  });

  it('releases only its own lease, refreshes only while it holds it, and breaks a stale lease once for two breakers', async () => {
    const a = new S3Store(clientOptions(gw.get()));
    const b = new S3Store(clientOptions(gw.get()));
    const path = `${freshPrefix(gw.get())}/step-4567`;
    expect(await a.createLease(path, holder('a1'))).toBe(true);
    expect(await b.createLease(path, holder('b1'))).toBe(false);
    await b.releaseLease(path, holder('b1')); // not b's: nothing happens
    expect((await a.readLease(path))?.holder?.token).toBe('a1');
    const seen = await b.readLease(path);
    const c = new S3Store(clientOptions(gw.get()));
    const broke = await Promise.all([b.breakLease(path, seen!), c.breakLease(path, seen!)]);
    expect(broke.filter(Boolean)).toHaveLength(1);
    expect(await a.readLease(path)).toBeNull();
    expect(await a.refreshLease(path, holder('a1'))).toBe(false);
    expect(await b.createLease(path, holder('b2'))).toBe(true);
    await expect(a.commit(path, holder('a1'), success)).rejects.toMatchObject({ code: 'CAIRN_LEASE_LOST' }); // a knows it lost the lease
    expect((await b.readStates([path], false))[0]?.status).toBeNull();
    await a.releaseLease(path, holder('a1'));
    expect((await b.readLease(path))?.holder?.token).toBe('b2');
  });
});
