import { hostname } from 'node:os';
import { isStale, type LeaseHolder } from '@cairn/runner/store';
import { LEASE_FILE } from '../src/layout.js';
import { describe, expect, it } from 'vitest';
import { freshPrefix, haveRgw, primitives, useGateway } from './helpers.js';

let n = 0;
function holder(runId: string, timestamp = Date.now() / 1000): LeaseHolder {
  return { worker_id: `${hostname()}-${process.pid}-${runId}`, timestamp, host: hostname(), pid: process.pid, processStartTime: null, runId, token: `${runId}.${++n}` };
}

describe.skipIf(!haveRgw)('leases on conditional writes against a real RADOS Gateway', () => {
  const gw = useGateway();
  const leaseKey = (s3: ReturnType<typeof primitives>) => {
    const { bucket, key } = s3.locate(`${freshPrefix(gw.get())}/step-0123/${LEASE_FILE}`);
    return { bucket, key };
  };

  it('create: one winner of 12 racers (each with its own client); the lease is the filesystem JSON holder', async () => {
    const clients = Array.from({ length: 12 }, () => primitives(gw.get()));
    const { bucket, key } = leaseKey(clients[0] as ReturnType<typeof primitives>);
    const holders = clients.map((_, i) => holder(`run${i}`));
    const won = await Promise.all(clients.map((c, i) => c.leases.create(bucket, key, holders[i] as LeaseHolder)));
    const winners = won.filter((w) => w !== null);
    expect(winners).toHaveLength(1);
    const read = await clients[0]?.leases.read(bucket, key);
    expect(read?.holder?.token).toBe(winners[0]?.token);
    expect(Object.keys(JSON.parse(read?.raw ?? '{}')).sort()).toEqual(['host', 'pid', 'processStartTime', 'runId', 'timestamp', 'token', 'worker_id']);
    expect(read?.etag).toBe(winners[0]?.etag);
    expect(read && isStale(read, 90_000)).toBe(false); // the runner's own staleness rule reads it
    for (const c of clients) c.destroy();
  });

  it('refresh keeps the lease ours; after a takeover the old holder can neither refresh nor release it', async () => {
    const a = primitives(gw.get());
    const b = primitives(gw.get());
    const { bucket, key } = leaseKey(a);
    const held = await a.leases.create(bucket, key, holder('a'));
    expect(held).not.toBeNull();
    const refreshed = await a.leases.refresh(held!, holder('a'));
    expect(refreshed).not.toBeNull();
    expect(refreshed!.etag).not.toBe(held!.etag);
    expect(await a.leases.isHeld(refreshed!)).toBe(true);
    expect(await a.leases.isHeld(held!)).toBe(false); // the fence compares versions, not holders
    // b sees the lease (as if stale) and takes it over with If-Match on what it read.
    const seen = await b.leases.read(bucket, key);
    const taken = await b.leases.takeover(bucket, key, seen!.etag, holder('b'));
    expect(taken).not.toBeNull();
    expect(await a.leases.refresh(refreshed!, holder('a'))).toBeNull();
    expect(await a.leases.isHeld(refreshed!)).toBe(false);
    expect(await a.leases.release(refreshed!)).toBe(false);
    expect((await b.leases.read(bucket, key))?.holder?.token).toBe(taken!.token); // still b's
    expect(await b.leases.release(taken!)).toBe(true);
    expect(await b.leases.read(bucket, key)).toBeNull();
    a.destroy();
    b.destroy();
  });

  it('takeover: of 8 takers of one stale lease exactly one wins', async () => {
    const takers = Array.from({ length: 8 }, () => primitives(gw.get()));
    const s3 = takers[0] as ReturnType<typeof primitives>;
    const { bucket, key } = leaseKey(s3);
    await s3.leases.create(bucket, key, holder('dead', Date.now() / 1000 - 3600));
    const seen = await s3.leases.read(bucket, key);
    // Judged by the object's age on the gateway (just written), not by the holder's old timestamp: stale 91 s from now.
    expect(seen && isStale(seen, 90_000)).toBe(false);
    expect(seen && isStale(seen, 90_000, Date.now() + 91_000)).toBe(true);
    const results = await Promise.all(takers.map((t, i) => t.leases.takeover(bucket, key, seen!.etag, holder(`taker${i}`))));
    const winners = results.filter((r) => r !== null);
    expect(winners).toHaveLength(1);
    expect((await s3.leases.read(bucket, key))?.holder?.token).toBe(winners[0]?.token);
    for (const t of takers) t.destroy();
  });
});
