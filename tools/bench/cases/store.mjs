// The durable-store floor: the raw file operations one step needs on a local disk, done by
// hand without Cairn. Per step (in a fresh directory):
//   1. read  {dir}/.executor_status            the cache check (a miss: ENOENT)
//   2. mkdir {dir}                             the output directory
//   3. open  {dir}/.executor_status.lock  wx   the lease (O_EXCL create)
//   4. write {dir}/.artifact.json.tmp, rename  the record, atomically
//   5. write {dir}/.executor_status.tmp, rename the status, atomically
//   6. unlink {dir}/.executor_status.lock      lease release
// `sync` does the steps one after another with synchronous calls; `async` keeps `concurrency`
// steps in flight with fs/promises. The runner's cold rate is reported as a fraction of `sync`.
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { scratch } from '../lib/tmp.mjs';
import { check, timeAsync, timeSync } from '../lib/timing.mjs';

const LEASE = '{"worker_id":"bench-1-run","timestamp":1764500000.5,"host":"bench","pid":1,"processStartTime":1,"runId":"run","token":"run.1"}';
const RECORD = `${JSON.stringify({ cairn: 1, name: 'n', nameWithHash: 'n-0123456789abcdef', outputPath: '/x', config: {}, deps: [], depPaths: [], status: 'SUCCESS', attempts: [], timings: { start: 0, end: 0, durationMs: 0 }, executor: 'inline', runId: 'run' }, null, 2)}\n`;

function stepDir(root, i) {
  return join(root, `n${i}-${(i * 2654435761 >>> 0).toString(16).padStart(16, '0')}`);
}

function missing(err) {
  if (err.code !== 'ENOENT') throw err;
}

function stepSync(root, i) {
  const d = stepDir(root, i);
  try {
    fs.readFileSync(join(d, '.executor_status'), 'utf8');
  } catch (err) {
    missing(err);
  }
  fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(join(d, '.executor_status.lock'), LEASE, { flag: 'wx' });
  fs.writeFileSync(join(d, '.artifact.json.tmp'), RECORD);
  fs.renameSync(join(d, '.artifact.json.tmp'), join(d, '.artifact.json'));
  fs.writeFileSync(join(d, '.executor_status.tmp'), 'SUCCESS');
  fs.renameSync(join(d, '.executor_status.tmp'), join(d, '.executor_status'));
  fs.unlinkSync(join(d, '.executor_status.lock'));
}

async function stepAsync(root, i) {
  const d = stepDir(root, i);
  await fsp.readFile(join(d, '.executor_status'), 'utf8').catch(missing);
  await fsp.mkdir(d, { recursive: true });
  await fsp.writeFile(join(d, '.executor_status.lock'), LEASE, { flag: 'wx' });
  await fsp.writeFile(join(d, '.artifact.json.tmp'), RECORD);
  await fsp.rename(join(d, '.artifact.json.tmp'), join(d, '.artifact.json'));
  await fsp.writeFile(join(d, '.executor_status.tmp'), 'SUCCESS');
  await fsp.rename(join(d, '.executor_status.tmp'), join(d, '.executor_status'));
  await fsp.unlink(join(d, '.executor_status.lock'));
}

function verify(root, n) {
  check(fs.readFileSync(join(stepDir(root, n - 1), '.executor_status'), 'utf8') === 'SUCCESS', 'last step committed');
}

export const variants = {
  async sync({ n }) {
    return () => {
      const s = scratch('floor');
      try {
        const { ms } = timeSync(() => {
          for (let i = 0; i < n; i++) stepSync(s.dir, i);
        });
        verify(s.dir, n);
        return ms;
      } finally {
        s.remove();
      }
    };
  },
  async async({ n, concurrency = 64 }) {
    return async () => {
      const s = scratch('floor');
      try {
        let next = 0;
        const worker = async () => {
          while (next < n) await stepAsync(s.dir, next++);
        };
        const ms = await timeAsync(() => Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker)));
        verify(s.dir, n);
        return { ms, concurrency };
      } finally {
        s.remove();
      }
    };
  },
};
