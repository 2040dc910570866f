// The durable-store floor: the raw file operations one step needs on a local disk, done by
// hand without Cairn, for the same guarantees (a lease that is never empty, a status re-checked
// under it, an output staged beside its path and renamed into place, a commit fenced by the
// lease). Per step (`{dir}` its output path, `{lease}` and `{stage}` beside it):
//   1. read   {dir}/.executor_status             the cache check (a miss: ENOENT)
//   2. write  {lease}.tmp, link {lease}, unlink  the lease, published whole
//   3. read   {dir}/.executor_status             re-checked under the lease (a miss)
//   4. mkdir  {stage}                            the attempt's own directory
//   5. write  {stage}/.artifact.json             the record (the directory is private: no temp file)
//   6. write  {stage}/.executor_status           the status
//   7. read   {lease}                            the fence: still ours?
//   8. rename {stage} -> {dir}                   the commit
//   9. unlink {lease}                            release
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

function paths(root, i) {
  const d = stepDir(root, i);
  const base = d.slice(root.length + 1);
  return { d, lease: join(root, `.${base}.cairn-lease`), stage: join(root, `.${base}.cairn-attempt-run-1`) };
}

/**
 * One step's operations above; `work(stage)`, when given, is the step's own work, done between
 * staging (4) and the record (5), as an attempt runs in its staged directory.
 */
function stepSync(root, i, work) {
  const { d, lease, stage } = paths(root, i);
  try {
    fs.readFileSync(join(d, '.executor_status'), 'utf8');
  } catch (err) {
    missing(err);
  }
  fs.writeFileSync(`${lease}.tmp`, LEASE);
  fs.linkSync(`${lease}.tmp`, lease);
  fs.unlinkSync(`${lease}.tmp`);
  try {
    fs.readFileSync(join(d, '.executor_status'), 'utf8');
  } catch (err) {
    missing(err);
  }
  fs.mkdirSync(stage);
  if (work !== undefined) work(stage);
  fs.writeFileSync(join(stage, '.artifact.json'), RECORD);
  fs.writeFileSync(join(stage, '.executor_status'), 'SUCCESS');
  check(fs.readFileSync(lease, 'utf8') === LEASE, 'the lease is ours');
  fs.renameSync(stage, d);
  fs.unlinkSync(lease);
}

/**
 * The floor of the `files` rows (runner.mjs): every step of `graph` (generate()'s index order is
 * topological) through the operations above, its own work being what the files step does:
 * read each dependency's `data.txt` (its first 64 characters), write its own. Synchronous, one
 * step after another. Returns a check that the last step's data is there.
 */
export function filesFloorSync(root, graph) {
  const { n, offsets, deps } = graph;
  for (let i = 0; i < n; i++) {
    stepSync(root, i, (out) => {
      let text = `step ${i}\n`;
      for (let e = offsets[i]; e < offsets[i + 1]; e++) text += fs.readFileSync(join(stepDir(root, deps[e]), 'data.txt'), 'utf8').slice(0, 64);
      fs.writeFileSync(join(out, 'data.txt'), text);
    });
  }
  check(fs.existsSync(join(stepDir(root, n - 1), 'data.txt')), 'the last step wrote its data');
}

async function stepAsync(root, i) {
  const { d, lease, stage } = paths(root, i);
  await fsp.readFile(join(d, '.executor_status'), 'utf8').catch(missing);
  await fsp.writeFile(`${lease}.tmp`, LEASE);
  await fsp.link(`${lease}.tmp`, lease);
  await fsp.unlink(`${lease}.tmp`);
  await fsp.readFile(join(d, '.executor_status'), 'utf8').catch(missing);
  await fsp.mkdir(stage);
  await fsp.writeFile(join(stage, '.artifact.json'), RECORD);
  await fsp.writeFile(join(stage, '.executor_status'), 'SUCCESS');
  check((await fsp.readFile(lease, 'utf8')) === LEASE, 'the lease is ours');
  await fsp.rename(stage, d);
  await fsp.unlink(lease);
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
