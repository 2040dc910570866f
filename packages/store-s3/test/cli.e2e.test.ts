/**
 * The `cairn` CLI on an s3:// prefix, against a real RADOS Gateway: a project whose
 * `cairn.config.mjs` names the store plugin (`stores: { s3: { use: s3StoreFactory, options } }`),
 * credentials from the standard AWS environment. `run`, `status`, `logs`, `explain`, `plan`,
 * `graph`, `report`, `clean` and `unlock` all read (and change) the bucket. Runs the BUILT CLI.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3Primitives, S3Store } from '../src/index.js';
import { clientOptions, freshPrefix, haveRgw, useGateway, writeS3Project } from './helpers.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = join(REPO, 'packages/cli/dist/bin.js');

interface Result {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

describe.skipIf(!haveRgw)('the cairn CLI on an s3:// prefix, against a real RADOS Gateway', () => {
  const gw = useGateway();
  const project = mkdtempSync(join(tmpdir(), 'cairn-s3-cli-'));
  let prefix: string;
  let s3: S3Primitives;
  afterAll(() => {
    s3?.destroy();
    rmSync(project, { recursive: true, force: true });
  });

  beforeAll(() => {
    if (!existsSync(BIN)) throw new Error(`Build the CLI first (npx tsup in packages/cli): ${BIN} is missing.`);
    const rgw = gw.get();
    prefix = freshPrefix(rgw, 'cli');
    s3 = new S3Primitives(clientOptions(rgw));
    // A user's project: the packages installed, the pipeline, and a config that names the store plugin.
    writeS3Project(project, rgw, prefix);
  });

  /** `cairn …args` in the project, credentials from the environment only. */
  const cairn = (args: readonly string[], env: Record<string, string> = {}) =>
    new Promise<Result>((resolve) => {
      const rgw = gw.get();
      const e: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', AWS_ACCESS_KEY_ID: rgw.accessKeyId, AWS_SECRET_ACCESS_KEY: rgw.secretAccessKey, AWS_EC2_METADATA_DISABLED: 'true', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...env };
      for (const k of ['CAIRN_PREFIX', 'CAIRN_CONFIG', 'AWS_ENDPOINT_URL', 'AWS_PROFILE', 'NODE_OPTIONS']) if (!(k in env)) delete e[k];
      const child = spawn(process.execPath, [BIN, ...args], { cwd: project, env: e, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  const cairnCli = cairn;
  const ok = (r: Result) => expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
  const keys = async (under = '') => {
    const { bucket, key } = s3.locate(prefix);
    const out: string[] = [];
    let token: string | undefined;
    do {
      const page = await s3.objects.list(bucket, { prefix: `${key}/${under}`, continuationToken: token });
      out.push(...page.objects.map((o) => o.key.slice(key.length + 1)));
      token = page.truncated ? page.next : undefined;
    } while (token !== undefined);
    return out;
  };

  it('run, then status, status <step>, logs, plan, graph and explain read the bucket', { timeout: 120_000 }, async () => {
    ok(await cairn(['run', 'pipeline.mjs']));
    const status = await cairn(['status', '--json']);
    ok(status);
    const rows = (JSON.parse(status.stdout) as { prefix: string; steps: { name: string; status: string; step: string }[] }).steps;
    expect(rows.map((r) => [r.name, r.status])).toEqual([
      ['prepare', 'SUCCESS'],
      ['train', 'SUCCESS'],
      ['evaluate', 'SUCCESS'],
    ]);
    expect(rows[1]?.step).toMatch(/^train\/v1(-[0-9a-f]+)?$/); // relative to the prefix, as on a filesystem
    const table = await cairn(['status']);
    ok(table);
    expect(table.stdout).toMatch(/3 step\(s\): 3 SUCCESS/);

    const one = await cairn(['status', 'train', '--json']);
    ok(one);
    const rec = JSON.parse(one.stdout) as { path: string; status: string; record: { result: unknown } };
    expect(rec.path.startsWith(`${prefix}/train/`)).toBe(true);
    expect(rec).toMatchObject({ status: 'SUCCESS', record: { result: { rows: 3, lr: 0.5 } } });

    const logs = await cairn(['logs', 'train']);
    ok(logs);
    expect(logs.stdout).toMatch(/INFO training with lr=0\.5/); // the committed log object

    const plan = await cairn(['plan', 'pipeline.mjs', '--json']);
    ok(plan);
    expect((JSON.parse(plan.stdout) as { counts: unknown }).counts).toMatchObject({ cached: 1 }); // the target; nothing below it needs looking at
    const graph = await cairn(['graph', 'pipeline.mjs', '--format', 'mermaid']);
    ok(graph);
    expect(graph.stdout).toMatch(/evaluate<br\/>[0-9a-f]{8} · cached/);

    const cached = await cairn(['explain', 'train', 'pipeline.mjs']);
    ok(cached);
    expect(cached.stdout).toMatch(/cached: the stored output is current/);
    const drifted = await cairn(['explain', 'train', 'pipeline.mjs', '--json'], { FX_LR: '0.1' });
    ok(drifted);
    // A new config is a new identity (a new path): the earlier build is found by one LIST beside it.
    const changed = JSON.parse(drifted.stdout) as { state: string; reasons: string[]; configDiff: string[] };
    expect(changed.state).toBe('run');
    expect(changed.reasons.join('\n')).toMatch(/changed since the last build: lr: 0\.5 -> 0\.1/);
    expect(changed.configDiff).toEqual(['lr: 0.5 -> 0.1']);
  });

  it('report: the run journal is in the bucket; the page has every step', { timeout: 60_000 }, async () => {
    const journals = await keys('.cairn/runs/');
    expect(journals.length).toBeGreaterThanOrEqual(1);
    const r = await cairn(['report', '--out', 'report.html']);
    ok(r);
    expect(r.stdout).toMatch(/wrote .*report\.html: run [0-9a-z-]+, 3 step\(s\), 0 failed \(from journal\)/);
    expect(readFileSync(join(project, 'report.html'), 'utf8')).toContain('evaluate');
  });

  it('a failed step: status, logs with the error, clean removes its output from the bucket', { timeout: 120_000 }, async () => {
    const fail = { FX_FAIL: '1', FX_VERSION: 'v2' };
    const run = await cairn(['run', 'pipeline.mjs'], fail);
    expect(run.code, run.stdout + run.stderr).toBe(1);
    const rows = (JSON.parse((await cairn(['status', '--json'])).stdout) as { steps: { name: string; status: string; step: string }[] }).steps;
    const failed = rows.filter((r) => r.status === 'FAILED');
    expect(failed.map((r) => r.name)).toEqual(['train']);
    expect(rows.filter((r) => r.status === 'DEP_FAILED').map((r) => r.step.split('/')[0])).toEqual(['evaluate']); // no record: it never ran
    const logs = await cairn(['logs', failed[0]!.step]);
    ok(logs);
    expect(logs.stdout).toMatch(/ERROR loss is NaN/);
    expect(logs.stdout).toMatch(/--- attempt 1 failed on inline @ .*: training diverged: loss is NaN/);

    const dry = await cairn(['clean', '--json']);
    ok(dry);
    const listed = (JSON.parse(dry.stdout) as { outputs: { step: string; reason: string }[] }).outputs;
    expect(listed.map((o) => o.reason).sort()).toEqual(['dep-failed', 'failed']);
    expect((await keys(`${failed[0]!.step}/`)).length).toBeGreaterThan(0);
    ok(await cairn(['clean', '--yes']));
    for (const o of listed) expect(await keys(`${o.step}/`), o.step).toEqual([]);
    const after = (JSON.parse((await cairn(['status', '--json'])).stdout) as { steps: { status: string }[] }).steps;
    expect(after.map((r) => r.status)).toEqual(['SUCCESS', 'SUCCESS', 'SUCCESS']);
  });

  it('unlock: lists a dead runner’s lease as stale and clears it with --stale; a live one is kept', { timeout: 120_000 }, async () => {
    const cairnIn = cairnCli;
    const { bucket, key } = s3.locate(prefix);
    const holder = (pid: number, ageS: number) => JSON.stringify({ worker_id: `${hostname()}-${pid}`, timestamp: Date.now() / 1000 - ageS, host: hostname(), pid, processStartTime: null, runId: 'dead-run', token: `t.${pid}` });
    // A lease is judged by the lease object's age on the gateway (README "Clocks"), not by the
    // timestamp in it: the orphan is left unrefreshed past a short staleMs, the busy one is fresh.
    const config = readFileSync(join(project, 'cairn.config.mjs'), 'utf8').replace('export default {', 'export default {\n  leases: { heartbeatMs: 1000, staleMs: 15000 },');
    writeFileSync(join(project, 'short-leases.mjs'), config);
    await s3.objects.put(bucket, `${key}/orphan/v1-0000000000000001/.executor_status.lock`, holder(2 ** 22 + 7, 3600));
    await new Promise((r) => setTimeout(r, 17_000)); // past staleMs, with whole-second ages
    const busy = () => s3.objects.put(bucket, `${key}/busy/v1-0000000000000002/.executor_status.lock`, holder(process.pid, 0));
    await busy();
    const cairn = (args: readonly string[]) => cairnIn([...args, '--config', join(project, 'short-leases.mjs')]);
    const list = await cairn(['unlock']);
    ok(list);
    expect(list.stdout).toMatch(/stale orphan\/v1-0000000000000001 held by .*:4194311 \(run dead-run\)/);
    expect(list.stdout).toMatch(/live\s+busy\/v1-0000000000000002 held by/);
    await busy(); // refreshed, as its live holder would
    const cleared = await cairn(['unlock', '--stale']);
    ok(cleared);
    expect(cleared.stdout).toMatch(/cleared orphan\/v1-0000000000000001/);
    expect(cleared.stdout).toMatch(/1 stale lease\(s\) cleared\./);
    expect(await keys('orphan/')).toEqual([]);
    expect(await keys('busy/')).toEqual(['busy/v1-0000000000000002/.executor_status.lock']);
  });

  it('clean refuses an s3:// prefix that is not a Cairn store; the marker every run writes makes one', { timeout: 90_000 }, async () => {
    // The runs above marked the prefix (a conditional PUT of the local store's marker format).
    const { bucket, key } = s3.locate(prefix);
    const marker = JSON.parse((await s3.objects.get(bucket, `${key}/.cairn/store.json`))?.body.toString() ?? 'null') as { format: string; version: number; created: number } | null;
    expect(marker).toMatchObject({ format: 'cairn-store', version: 1 });
    const other = s3.locate(freshPrefix(gw.get(), 'notastore'));
    const otherUrl = `s3://${other.bucket}/${other.key}`;
    // An empty prefix, and one whose only step-like thing is a status file (anyone may write one): nothing removed.
    const empty = await cairn(['clean', '--yes', '--prefix', `${otherUrl}-empty`]);
    expect(empty.code, empty.stdout + empty.stderr).toBe(2);
    expect(empty.stderr).toMatch(/CAIRN_NOT_A_STORE/);
    await s3.objects.put(other.bucket, `${other.key}/junk/v1/.executor_status`, 'FAILED');
    const refused = await cairn(['clean', '--yes', '--prefix', otherUrl]);
    expect(refused.code, refused.stdout + refused.stderr).toBe(2);
    expect(refused.stderr).toMatch(/not a Cairn store[^]*store marker \(\.cairn\/store\.json\)[^]*junk\/v1[^]*Nothing was removed[^]*\[CAIRN_NOT_A_STORE\]/);
    expect(await s3.objects.head(other.bucket, `${other.key}/junk/v1/.executor_status`)).not.toBeNull();
    // Marked (as a run marks it), the same prefix is a store: clean removes the failed step.
    const rgw = gw.get();
    const store = new S3Store({ endpoint: rgw.endpoint, region: rgw.region, credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey }, cacheDir: false });
    try {
      expect(await store.readMarker(otherUrl)).toBeNull();
      await Promise.all([store.markStore(otherUrl), store.markStore(otherUrl)]);
      const first = await store.readMarker(otherUrl);
      expect(first).toMatchObject({ format: 'cairn-store', version: 1 });
      await store.markStore(otherUrl); // never rewritten
      expect(await store.readMarker(otherUrl)).toEqual(first);
    } finally {
      store.s3.destroy();
    }
    const cleaned = await cairn(['clean', '--yes', '--prefix', otherUrl]);
    ok(cleaned);
    expect(cleaned.stdout).toMatch(/removed junk\/v1/);
    expect(await s3.objects.head(other.bucket, `${other.key}/junk/v1/.executor_status`)).toBeNull();
  });

  it('a prefix whose bucket does not exist, or no store plugin for s3://, is one clear error', { timeout: 60_000 }, async () => {
    const missing = await cairn(['status', '--prefix', 's3://no-such-bucket-cairn/x']);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/The bucket "no-such-bucket-cairn" of the store prefix s3:\/\/no-such-bucket-cairn\/x does not exist/);
    const bare = await cairn(['status', '--config', join(project, 'none.mjs')]);
    expect(bare.code).not.toBe(0);
    writeFileSync(join(project, 'none.mjs'), `export default { prefix: ${JSON.stringify(prefix)} };\n`);
    const unregistered = await cairn(['status', '--config', join(project, 'none.mjs')]);
    expect(unregistered.code).not.toBe(0);
    expect(unregistered.stderr).toMatch(/No store is registered for the prefix s3:\/\/.* \(scheme s3:\/\/\)\. Registered: file:\/\/ and plain paths\./);
    for (const r of [missing, unregistered]) expect(r.stderr + r.stdout).not.toContain(gw.get().secretAccessKey);
  });
});
