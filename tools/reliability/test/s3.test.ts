/**
 * The S3 store under stress, against a real Ceph RADOS Gateway on loopback (tools/testenv/rgw.ts),
 * with real runner processes (fixtures/s3-runner.mjs, BUILT packages): two and then four runners
 * at once on one s3:// prefix with overlapping pipelines, a runner SIGKILLed mid-run and rerun, a
 * runner paused (SIGSTOP) past its lease while another takes the step over, the gateway killed
 * mid-run and restarted, wrong credentials, a missing bucket, and a record object holding garbage.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { S3Primitives } from '@cairn/store-s3';
import { rgwOrSkip, startRgw, type RgwInstance } from '../../testenv/rgw.js';
import { FIXTURES, scratchDir } from './children.js';
import { assertBuilt } from './env.js';
import { record } from './metrics.js';
import { spawnReporting } from '../../testenv/reporting-child.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.AWS_EC2_METADATA_DISABLED = 'true';
const haveRgw = rgwOrSkip('the S3 reliability tests');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

/** Configuration of one s3-runner child (see the fixture's header). */
interface RunnerConfig {
  prefix: string;
  work: string;
  roots: number;
  depth: number;
  stepMs?: number;
  maxConcurrent?: number;
  select?: { mod: number; skip: number };
  leases?: { heartbeatMs?: number; staleMs?: number; pollMs?: number };
  store?: Record<string, unknown>;
}

interface Outcome {
  readonly ok: boolean;
  readonly code?: string;
  readonly cause?: string;
  readonly message?: string;
  readonly counts?: Record<string, number>;
  readonly failures?: { step: string; code: string; message: string }[];
}

const s3: Record<string, number | string> = {};
afterAll(() => record('s3', s3));

describe.skipIf(!haveRgw)('the S3 store under stress, against a real RADOS Gateway', () => {
  let rgw: RgwInstance;
  let store: S3Primitives;
  beforeAll(async () => {
    assertBuilt();
    if (!existsSync(join(FIXTURES, '../../../packages/store-s3/dist/index.js'))) throw new Error('packages/store-s3/dist is missing: build first.');
    rgw = await startRgw();
    store = new S3Primitives({ endpoint: rgw.endpoint, region: rgw.region, credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey }, cacheDir: false });
  }, 120_000);
  afterAll(async () => {
    store?.destroy();
    await rgw?.stop();
  });

  const fresh = (tag: string) => `s3://${rgw.bucket}/rel-${tag}-${randomBytes(4).toString('hex')}`;

  /** Starts a runner process on the gateway; `env` overrides the AWS environment. */
  function runner(config: RunnerConfig, env: Record<string, string> = {}) {
    const c = spawnReporting<Outcome>(process.execPath, [join(FIXTURES, 's3-runner.mjs'), JSON.stringify(config)], { ...process.env, ...rgw.env, ...env });
    cleanups.push(() => c.proc.kill('SIGKILL'));
    return c;
  }

  /** A scratch directory removed after the test. */
  const scratch = (tag: string) => {
    const work = scratchDir(tag);
    cleanups.push(work.cleanup);
    return work;
  };

  /** Step names executed since `before` was taken (from <work>/counts). */
  const ranSince = (work: string, before: ReadonlyMap<string, number>) => [...executions(work)].filter(([name, c]) => c > (before.get(name) ?? 0)).map(([name]) => name);

  /** Executions per step name so far (from <work>/counts). */
  const executions = (work: string): Map<string, number> => {
    const dir = join(work, 'counts');
    const out = new Map<string, number>();
    if (!existsSync(dir)) return out;
    for (const f of readdirSync(dir)) out.set(f, readFileSync(join(dir, f), 'utf8').trim().split('\n').filter(Boolean).length);
    return out;
  };

  /** Every step directory under `prefix`: its status, its `data` and its record's result. */
  async function stored(prefix: string): Promise<Map<string, { status?: string; data?: string; record?: string; lease: boolean }>> {
    const { bucket, key } = store.locate(prefix);
    const out = new Map<string, { status?: string; data?: string; record?: string; lease: boolean }>();
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await store.objects.list(bucket, { prefix: `${key}/`, continuationToken: token });
      keys.push(...page.objects.map((o) => o.key));
      token = page.truncated ? page.next : undefined;
    } while (token !== undefined);
    // Outputs live under an attempt's prefix (`{dir}/@{runId}/data`); the record names the committed one.
    const data = new Map<string, string>();
    for (const k of keys) {
      const [dir, ...rest] = k.slice(key.length + 1).split('/');
      const name = rest.join('/');
      if (dir === undefined || dir === '.cairn') continue;
      const e = out.get(dir) ?? { lease: false };
      out.set(dir, e);
      if (name === '.executor_status.lock') e.lease = true;
      else if (name === '.executor_status') e.status = (await store.objects.get(bucket, k))?.body.toString();
      else if (name === 'data' || /^@[^/]+\/data$/.test(name)) data.set(`${dir}/${name}`, (await store.objects.get(bucket, k))?.body.toString() ?? '');
      else if (name === '.artifact.json') e.record = (await store.objects.get(bucket, k))?.body.toString();
    }
    for (const [dir, e] of out) {
      let objects: string | undefined;
      try {
        objects = e.record === undefined ? undefined : (JSON.parse(e.record) as { objects?: string }).objects;
      } catch {
        objects = undefined; // a garbage record (the test that writes one)
      }
      e.data = data.get(`${dir}/${objects ?? ''}data`);
    }
    return out;
  }

  /** Step directories (by name) whose status is SUCCESS and whose data is complete. */
  const built = (dirs: Map<string, { status?: string; data?: string }>) =>
    new Set([...dirs].filter(([dir, e]) => e.status === 'SUCCESS' && e.data === `BEGIN\nEND ${dir.replace(/-[0-9a-f]{16}$/, '')}\n`).map(([dir]) => dir.replace(/-[0-9a-f]{16}$/, '')));

  async function until(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
    const end = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
      await sleep(50);
    }
  }

  it.each([2, 4])('%i runner processes at once on one s3:// prefix with overlapping pipelines: every step runs exactly once', async (n) => {
    const work = scratch(`cairn-rel-s3-${n}-`);
    const prefix = fresh(`concurrent${n}`);
    const roots = 24;
    const depth = 3;
    const children = Array.from({ length: n }, (_, skip) => runner({ prefix, work: work.dir, roots, depth, stepMs: 40, select: { mod: n, skip } }));
    const results = await Promise.all(children.map((c) => c.done));
    for (const [i, r] of results.entries()) expect(r, children[i]?.output().slice(-2000)).toMatchObject({ ok: true });
    const ran = executions(work.dir);
    const duplicates = [...ran.values()].reduce((a, c) => a + Math.max(0, c - 1), 0);
    const dirs = await stored(prefix);
    const lost = roots * depth - built(dirs).size;
    s3[`concurrent${n}`] = `${n} runners, ${roots * depth} steps: ${duplicates} duplicate executions, ${lost} lost outputs, ${[...dirs.values()].filter((e) => e.lease).length} leases left`;
    s3.duplicateExecutions = (Number(s3.duplicateExecutions) || 0) + duplicates;
    s3.lostOutputs = (Number(s3.lostOutputs) || 0) + lost;
    expect(ran.size).toBe(roots * depth);
    expect(duplicates).toBe(0);
    expect(lost).toBe(0);
    expect([...dirs.values()].some((e) => e.lease)).toBe(false);
    // The DAG was shared: more than one runner executed steps.
    const pids = new Set(readdirSync(join(work.dir, 'counts')).map((f) => readFileSync(join(work.dir, 'counts', f), 'utf8').trim()));
    expect(pids.size).toBeGreaterThan(1);
  }, 180_000);

  it('a runner SIGKILLed mid-run, then rerun: no step that reached SUCCESS runs again', async () => {
    const work = scratch('cairn-rel-s3-kill-');
    const prefix = fresh('killed');
    const config = { prefix, work: work.dir, roots: 16, depth: 3, stepMs: 60 };
    const first = runner(config);
    await until(async () => [...(await stored(prefix)).values()].filter((e) => e.status === 'SUCCESS').length >= 8, 60_000, '8 committed steps');
    first.proc.kill('SIGKILL');
    await first.done;
    const before = await stored(prefix);
    const builtBefore = built(before);
    expect(builtBefore.size).toBeLessThan(48);
    expect([...before.values()].some((e) => e.lease)).toBe(true); // the dead runner's leases are still there
    const ranBefore = executions(work.dir);
    const second = await runner(config).done;
    expect(second).toMatchObject({ ok: true });
    const again = ranSince(work.dir, ranBefore);
    const rerunBuilt = again.filter((name) => builtBefore.has(name));
    const after = await stored(prefix);
    s3.sigkill = `killed after ${builtBefore.size} of 48 steps committed; rerun executed ${again.length}, of which SUCCESS before: ${rerunBuilt.length}; ${48 - built(after).size} lost`;
    s3.duplicateExecutions = (Number(s3.duplicateExecutions) || 0) + rerunBuilt.length;
    expect(rerunBuilt).toEqual([]);
    expect(built(after).size).toBe(48);
    // Leases left are only the dead runner's on steps it had committed (killed between the status
    // and the lease's DELETE): harmless, the rerun serves those steps and never takes them;
    // `cairn unlock --stale` clears them. Every other lease of the dead runner was taken over.
    const committedUnderDeadLease = new Set([...before].filter(([, e]) => e.lease && e.status === 'SUCCESS').map(([k]) => k));
    const left = [...after].filter(([, e]) => e.lease).map(([k]) => k);
    expect(left.filter((k) => !committedUnderDeadLease.has(k))).toEqual([]);
  }, 120_000);

  it('a runner paused (SIGSTOP) past its lease while another takes the step over commits nothing', async () => {
    const work = scratch('cairn-rel-s3-pause-');
    const prefix = fresh('paused');
    const config = { prefix, work: work.dir, roots: 1, depth: 1, stepMs: 3000, leases: { heartbeatMs: 300, staleMs: 1500 } };
    const a = runner(config);
    await until(() => a.output().includes('STARTED c0-0'), 30_000, 'runner A to start the step');
    a.proc.kill('SIGSTOP'); // a frozen VM, a long GC pause
    await sleep(1900);
    const b = runner(config);
    await until(() => b.output().includes('STARTED c0-0'), 30_000, 'runner B to take the stale lease over');
    a.proc.kill('SIGCONT'); // A wakes while B still works on the step
    const ra = await a.done;
    const rb = await b.done;
    expect(ra, a.output()).toMatchObject({ ok: false, code: 'CAIRN_STEP_FAILED', cause: 'CAIRN_LEASE_LOST' });
    expect(rb, b.output()).toMatchObject({ ok: true, counts: { succeeded: 1 } });
    const [entry] = [...(await stored(prefix)).values()];
    expect(executions(work.dir).get('c0-0')).toBe(2); // both ran the function; one execution is committed
    expect(entry?.data).toBe('BEGIN\nEND c0-0\n'); // B's upload; A uploaded nothing
    expect(JSON.parse(entry?.record ?? '{}').result).toBe(b.proc.pid);
    expect(entry?.lease).toBe(false);
    s3.pausedRunner = 'ok: A got CAIRN_LEASE_LOST and uploaded nothing; the output and record are B’s';
  }, 90_000);

  it('the gateway killed mid-run and restarted: a clear error or retries, the rerun completes, nothing lost', async () => {
    const work = scratch('cairn-rel-s3-gw-');
    const prefix = fresh('gateway');
    const config = { prefix, work: work.dir, roots: 12, depth: 4, stepMs: 150, store: { retry: { maxAttempts: 4, baseDelayMs: 100 }, connectTimeoutMs: 1000, requestTimeoutMs: 5000 } };
    const first = runner(config);
    await until(async () => [...(await stored(prefix)).values()].filter((e) => e.status === 'SUCCESS').length >= 6, 60_000, '6 committed steps');
    await rgw.stopGateway(true); // SIGKILL: connections reset, requests refused
    await sleep(3000);
    await rgw.startGateway();
    const r1 = await first.done;
    // Either the retries carried the run over the outage, or steps failed naming the store.
    if (!r1.ok) {
      expect(r1.code, first.output().slice(-3000)).toBe('CAIRN_STEP_FAILED');
      for (const f of r1.failures ?? []) expect(`${f.code} ${f.message}`).toMatch(/CAIRN_STORE|CAIRN_DEP_FAILED|object store|s3:\/\//);
    }
    const before = built(await stored(prefix));
    const ranBefore = executions(work.dir);
    const r2 = await runner(config).done;
    expect(r2).toMatchObject({ ok: true });
    const again = ranSince(work.dir, ranBefore);
    const after = await stored(prefix);
    for (const e of after.values()) if (e.record !== undefined) expect(() => JSON.parse(e.record as string)).not.toThrow();
    s3.gatewayKilled = `first run ${r1.ok ? 'rode it out (retries)' : `failed clearly (${(r1.failures ?? []).length} step(s), ${[...new Set((r1.failures ?? []).map((f) => f.code))].join('/')})`}; rerun executed ${again.length}, SUCCESS before: ${again.filter((n) => before.has(n)).length}; ${48 - built(after).size} lost`;
    expect(again.filter((n) => before.has(n))).toEqual([]);
    expect(built(after).size).toBe(48);
  }, 180_000);

  it('wrong credentials and a missing bucket: one clear error before anything runs, no credential shown', async () => {
    const work = scratch('cairn-rel-s3-cred-');
    const wrong = 'not-the-secret-Q1w2e3r4';
    const cred = runner({ prefix: fresh('cred'), work: work.dir, roots: 2, depth: 2 }, { AWS_SECRET_ACCESS_KEY: wrong });
    const rc = await cred.done;
    expect(rc).toMatchObject({ ok: false, code: 'CAIRN_STORE' });
    expect(rc.message).toMatch(/refused the credentials for s3:\/\/.* \(SignatureDoesNotMatch\)\. Nothing was run\./);
    for (const secret of [wrong, rgw.secretAccessKey]) expect(cred.output()).not.toContain(secret);
    const bucket = runner({ prefix: 's3://no-such-bucket-rel/x', work: work.dir, roots: 2, depth: 2 });
    const rb = await bucket.done;
    expect(rb).toMatchObject({ ok: false, code: 'CAIRN_STORE' });
    expect(rb.message).toMatch(/The bucket "no-such-bucket-rel" of the store prefix s3:\/\/no-such-bucket-rel\/x does not exist at http:\/\/127\.0\.0\.1:\d+\. Nothing was run\. Create it/);
    expect(executions(work.dir).size).toBe(0);
    s3.wrongCredentials = 'ok: one CAIRN_STORE naming the prefix and the fix, no secret in the output, nothing ran';
    s3.missingBucket = 'ok: one CAIRN_STORE naming the bucket and the fix, nothing ran';
  }, 60_000);

  it('a record object holding garbage: that step is rebuilt with a warning, the others stay cached', async () => {
    const work = scratch('cairn-rel-s3-garbage-');
    const prefix = fresh('garbage');
    const config = { prefix, work: work.dir, roots: 3, depth: 2, stepMs: 10 };
    expect(await runner(config).done).toMatchObject({ ok: true, counts: { succeeded: 6 } });
    const { bucket, key } = store.locate(prefix);
    const target = [...(await stored(prefix)).keys()].find((d) => d.startsWith('c1-1-')) as string;
    await store.objects.put(bucket, `${key}/${target}/.artifact.json`, '{"cairn": 1, "name": "c1-1", \u0000 not json');
    const ranBefore = executions(work.dir);
    const again = runner(config);
    const r = await again.done;
    expect(r).toMatchObject({ ok: true, counts: { succeeded: 1 } });
    expect(again.output()).toMatch(/WARN .*c1-1/);
    const rerun = ranSince(work.dir, ranBefore);
    expect(rerun).toEqual(['c1-1']);
    const fixed = (await stored(prefix)).get(target);
    expect(JSON.parse(fixed?.record ?? '').name).toBe('c1-1');
    s3.garbageRecord = 'ok: the step was rebuilt with a warning, its record replaced; the others stayed cached';
  }, 60_000);
});
