import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diffCounts, S3Store, type S3Primitives } from '../src/index.js';
import { clientOptions, freshPrefix, haveRgw, primitives, useGateway } from './helpers.js';

const record = (i: number, status: string) => `${JSON.stringify({ cairn: 1, name: `s${i}`, nameWithHash: `s${i}-x`, status, deps: [], attempts: [] }, null, 2)}\n`;

/** Writes N steps under `prefix`: SUCCESS, FAILED, or nothing, in turn; returns their paths. */
async function seed(s3: S3Primitives, prefix: string, n: number): Promise<string[]> {
  const paths = Array.from({ length: n }, (_, i) => `${prefix}/step${String(i).padStart(5, '0')}-abcdef`);
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const { bucket, key } = s3.locate(paths[i] as string);
      if (i % 3 === 2) continue;
      const status = i % 3 === 0 ? 'SUCCESS' : 'FAILED';
      await s3.objects.put(bucket, `${key}/.artifact.json`, record(i, status));
      await s3.objects.put(bucket, `${key}/.executor_status`, status);
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  return paths;
}

describe.skipIf(!haveRgw)('batched state reads against a real RADOS Gateway', () => {
  const gw = useGateway();

  it('reads 1,500 steps from a few LIST pages, skipping a step with 1,050 output files', { timeout: 120_000 }, async () => {
    const s3 = primitives(gw.get());
    const store = new S3Store({ primitives: s3 });
    const prefix = freshPrefix(gw.get());
    const paths = await seed(s3, prefix, 1_500);
    // One step with many outputs: they sort after its dot-files, and the listing jumps past them.
    const big = s3.locate(paths[300] as string);
    await Promise.all(Array.from({ length: 1_050 }, (_, i) => s3.objects.put(big.bucket, `${big.key}/part-${String(i).padStart(5, '0')}`, 'x')));
    const before = s3.counter.counts();
    const states = await store.readStates(paths, false);
    const used = diffCounts(s3.counter.counts(), before);
    expect(states.map((s) => s.status)).toEqual(paths.map((_, i) => (i % 3 === 0 ? 'SUCCESS' : i % 3 === 1 ? 'FAILED' : null)));
    expect(used.GetObject).toBeUndefined(); // statuses are known from their ETags
    // 2,000 metadata keys: 2 pages, plus a restart after the big step and the 4 segments' overlaps.
    if (process.env.CAIRN_TEST_DEBUG) console.log("lists", used);
    expect(used.ListObjectsV2).toBeLessThanOrEqual(9);
    s3.destroy();
  });

  it('records: one GET each the first time, none once this host has them (memory, then a disk cache in a new process)', { timeout: 60_000 }, async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'cairn-s3-cache-'));
    try {
      const s3 = primitives(gw.get(), { cacheDir });
      const store = new S3Store({ primitives: s3 });
      const paths = await seed(s3, freshPrefix(gw.get()), 300);
      let before = s3.counter.counts();
      const first = await store.readStates(paths, true);
      expect(diffCounts(s3.counter.counts(), before).GetObject).toBe(200);
      expect(first[3]?.record?.name).toBe('s3');
      expect(first[2]).toEqual({ status: null, record: null });
      before = s3.counter.counts();
      const second = await store.readStates(paths, true);
      expect(diffCounts(s3.counter.counts(), before).GetObject).toBeUndefined();
      expect(second).toEqual(first);
      const fresh = primitives(gw.get(), { cacheDir }); // as a new process on the same host would
      const third = await new S3Store({ primitives: fresh }).readStates(paths, true);
      expect(fresh.counter.counts().GetObject).toBeUndefined();
      expect(third).toEqual(first);
      s3.destroy();
      fresh.destroy();
    } finally {
      rmSync(cacheDir, { recursive: true, force: true });
    }
  });

  it('unusable objects: a garbage record and an unknown status are problems; a Marin JSON-lines status is read with a GET', async () => {
    const s3 = primitives(gw.get());
    const store = new S3Store({ primitives: s3 });
    const prefix = freshPrefix(gw.get());
    const at = (name: string, file: string) => {
      const { bucket, key } = s3.locate(`${prefix}/${name}`);
      return [bucket, `${key}/${file}`] as const;
    };
    await s3.objects.put(...at('garbage', '.executor_status'), 'SUCCESS');
    await s3.objects.put(...at('garbage', '.artifact.json'), '{"cairn": 1, "na');
    await s3.objects.put(...at('weird', '.executor_status'), 'BUILT');
    await s3.objects.put(...at('marin', '.executor_status'), '{"status": "RUNNING"}\n{"status": "SUCCESS"}\n');
    const [garbage, weird, marin] = await store.readStates([`${prefix}/garbage`, `${prefix}/weird`, `${prefix}/marin`], true);
    expect(garbage).toEqual({ status: 'SUCCESS', record: null, problem: 'the record is not valid JSON (half-written?)' });
    expect(weird?.status).toBeNull();
    expect(weird?.problem).toMatch(/unknown status "BUILT"/);
    expect(marin).toEqual({ status: 'SUCCESS', record: null });
    s3.destroy();
  });

  it('64 concurrent one-step reads (a runner re-checking the steps it just leased) share a few LISTs', async () => {
    const s3 = primitives(gw.get());
    const store = new S3Store({ primitives: s3 });
    const paths = await seed(s3, freshPrefix(gw.get()), 600);
    const picked = paths.filter((_, i) => i % 9 === 0).slice(0, 64);
    const before = s3.counter.counts();
    const states = await Promise.all(picked.map((p) => store.readStates([p], false)));
    const used = diffCounts(s3.counter.counts(), before);
    expect(states.map(([s]) => s?.status)).toEqual(picked.map((p) => (Number(/step(\d+)/.exec(p)?.[1]) % 3 === 0 ? 'SUCCESS' : Number(/step(\d+)/.exec(p)?.[1]) % 3 === 1 ? 'FAILED' : null)));
    if (process.env.CAIRN_TEST_DEBUG) console.log("lists", used);
    expect(used.ListObjectsV2).toBeLessThanOrEqual(4);
    s3.destroy();
  });
});

export { clientOptions };
