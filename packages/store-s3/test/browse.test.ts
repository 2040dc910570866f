/**
 * What the CLI reads of an S3 store (`S3Store.browse`, `attemptLogs`), against a real RADOS
 * Gateway: steps found from a flat listing that jumps past a step's many output files, logs of
 * committed attempts, files, and removal that takes the status first and never a sibling.
 */
import { describe, expect, it } from 'vitest';
import { diffCounts, S3Store } from '../src/index.js';
import { clientOptions, freshPrefix, haveRgw, useGateway } from './helpers.js';

describe.skipIf(!haveRgw)('browsing an S3 store against a real RADOS Gateway', () => {
  const gw = useGateway();

  it('finds steps at any depth from few LISTs, jumping past 2,100 output files, the prefix’s own .cairn and markers inside outputs', { timeout: 120_000 }, async () => {
    const store = new S3Store(clientOptions(gw.get()));
    const prefix = freshPrefix(gw.get(), 'browse');
    const { bucket, key } = store.s3.locate(prefix);
    const put = (k: string, body = 'x') => store.s3.objects.put(bucket, `${key}/${k}`, body);
    const keys = [
      'a-0001/.executor_status',
      'a-0001/.artifact.json',
      ...Array.from({ length: 2100 }, (_, i) => `a-0001/out/part-${String(i).padStart(4, '0')}`),
      'a-0001/out/copy/.executor_status', // an output that looks like a step: not one
      'b/v1/.artifact.json', // a record without a status (a failed first attempt)
      'b/v1/.cairn/logs/attempt-1.stdout',
      'c-0003/.executor_status.lock', // running for the first time
      'd/x/y/z/w/.executor_status', // deeper than the CLI looks
      'e-0005/model.bin', // no metadata: not a step
      '.cairn/probe/p-1', // the prefix's own files
      '.cairn/runs/r1.jsonl',
    ];
    let next = 0;
    await Promise.all(Array.from({ length: 32 }, async () => {
      while (next < keys.length) await put(keys[next++] as string);
    }));
    const before = store.s3.counter.counts();
    const found = await store.browse.findSteps(prefix, 4);
    expect(found).toEqual([
      { path: `${prefix}/a-0001`, leased: false },
      { path: `${prefix}/b/v1`, leased: false },
      { path: `${prefix}/c-0003`, leased: true },
    ]);
    // Without the jump the 2,111 keys take 3 pages; with it the second page starts past a-0001's outputs.
    expect(diffCounts(store.s3.counter.counts(), before)).toEqual({ ListObjectsV2: 2 });
    expect(await store.browse.findSteps(`${prefix}/b`, 4)).toEqual([{ path: `${prefix}/b/v1`, leased: false }]);
    store.s3.destroy();
  });

  it('committed attempt logs are listed as s3:// files and read back; listFiles and writeFile round-trip', async () => {
    const store = new S3Store(clientOptions(gw.get()));
    const step = `${freshPrefix(gw.get(), 'logs')}/train-0123`;
    const { bucket, key } = store.s3.locate(step);
    await store.s3.objects.put(bucket, `${key}/.cairn/logs/attempt-1.stdout`, 'first\n');
    await store.s3.objects.put(bucket, `${key}/.cairn/logs/attempt-1.stderr`, '');
    await store.s3.objects.put(bucket, `${key}/.cairn/logs/attempt-2.stdout`, 'second\n');
    const logs = await store.attemptLogs(step);
    expect(logs).toEqual([
      { attempt: 1, stdout: `${step}/.cairn/logs/attempt-1.stdout`, stderr: `${step}/.cairn/logs/attempt-1.stderr`, running: false },
      { attempt: 2, stdout: `${step}/.cairn/logs/attempt-2.stdout`, stderr: `${step}/.cairn/logs/attempt-2.stderr`, running: false },
    ]);
    expect(Buffer.from((await store.browse.readFile(logs[1]!.stdout)) ?? []).toString()).toBe('second\n');
    expect(await store.browse.readFile(`${step}/nothing`)).toBeNull();
    await store.browse.writeFile(`${step}/note.json`, '{}');
    expect((await store.browse.listFiles(step)).map((f) => f.path.slice(step.length + 1)).sort()).toEqual(['.cairn/logs/attempt-1.stderr', '.cairn/logs/attempt-1.stdout', '.cairn/logs/attempt-2.stdout', 'note.json']);
    store.s3.destroy();
  });

  it('remove: every object of the step, the status first and the lease last; a sibling with the same name start is kept', async () => {
    const store = new S3Store(clientOptions(gw.get()));
    const prefix = freshPrefix(gw.get(), 'rm');
    const { bucket, key } = store.s3.locate(prefix);
    for (const k of ['s-1/.executor_status', 's-1/.artifact.json', 's-1/.executor_status.lock', 's-1/out/a', 's-10/.executor_status']) await store.s3.objects.put(bucket, `${key}/${k}`, 'x');
    const deletes: string[] = [];
    const del = store.s3.objects.delete.bind(store.s3.objects);
    store.s3.objects.delete = async (b, k) => {
      deletes.push(k.slice(key.length + 1));
      return del(b, k);
    };
    await store.browse.remove(`${prefix}/s-1`);
    expect(deletes[0]).toBe('s-1/.executor_status');
    expect(deletes.at(-1)).toBe('s-1/.executor_status.lock');
    expect(deletes.sort()).toEqual(['s-1/.artifact.json', 's-1/.executor_status', 's-1/.executor_status.lock', 's-1/out/a']);
    const left = await store.s3.objects.list(bucket, { prefix: `${key}/` });
    expect(left.objects.map((o) => o.key.slice(key.length + 1))).toEqual(['s-10/.executor_status']);
    await expect(store.browse.remove(`s3://${gw.get().bucket}`)).rejects.toThrow(/Refusing to remove s3:\/\/cairn-test: it is a whole bucket/);
    store.s3.destroy();
  });
});
