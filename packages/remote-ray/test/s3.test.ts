/**
 * Command and apply steps on a Ray cluster that does not share the runner's filesystem, with an S3 store on a
 * real Ceph RADOS Gateway (tools/testenv/rgw.ts). The cluster (one head, tools/testenv/ray.ts with
 * `hide`) runs in its own mount namespace with an empty tmpfs over this test's directory, where the
 * runner keeps the project's sources and the store's staging directories: no job can read or write
 * anything there, and each program checks it. Its sources come in the job's working_dir package,
 * its dependency from the bucket, its output goes to the attempt's own prefix, its result back
 * through Ray's job log; the runner commits by record; a rerun is cached; a failing program's exit
 * code and log tail are reported. One cluster, one gateway, for the whole file; the cases after
 * the first run at once (4 CPUs for the head: one per job).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apply, command, input, OUT } from '@cairn/core';
import { StepRunner, type ArtifactRecord } from '@cairn/runner';
import { S3Store, s3StoreFactory } from '@cairn/store-s3';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { missingRay, startRay, type RayCluster } from '../../../tools/testenv/ray.js';
import { rgwOrSkip, startRgw, type RgwInstance } from '../../../tools/testenv/rgw.js';
import { createRayExecutor, type RayExecutor } from '../src/index.js';
import { boom, countWords } from './fixtures/steps.mjs';

const missing = missingRay();
if (missing && process.env.CI) throw new Error(`Ray is required in CI: ${missing}`);
if (missing) console.warn(`Skipping the tests on a real Ray: ${missing}`);
const haveRgw = rgwOrSkip('the Ray executor with an S3 store');
const quiet = { info() {}, warn() {}, error() {} };

// Everything the runner keeps on its disk is under `root`, which no Ray node can see.
const root = mkdtempSync(join(tmpdir(), 'cairn-ray-s3-'));
const project = join(root, 'project');
const localRoot = join(root, 'staging');
let cluster: RayCluster;
let rgw: RgwInstance;

const MAKE = `import os, sys
out = sys.argv[1]
os.makedirs(os.path.join(out, "sub"), exist_ok=True)
with open(os.path.join(out, "data.txt"), "w") as f:
    f.write("a b c\\nd e\\n")
with open(os.path.join(out, "sub", "note.txt"), "w") as f:
    f.write("nested")
print("made it")
`;
const COUNT = `import json, os, sys
data, out = sys.argv[1], sys.argv[2]
with open(os.path.join(data, "data.txt")) as f:
    words = len(f.read().split())
with open(os.path.join(data, "sub", "note.txt")) as f:
    note = f.read()
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "count.txt"), "w") as f:
    f.write(str(words))
seen = {p: os.path.exists(p) for p in os.environ["RUNNER_PATHS"].split(":")}
with open(os.environ["CAIRN_RESULT"], "w") as f:
    json.dump({"result": {"words": words, "note": note, "data": data, "env": os.environ["DATA"], "cwd": os.getcwd(), "seen": seen, "here": sorted(os.listdir("."))}}, f)
print("counted", words)
`;

function makeStep() {
  return command({ name: 'make', version: 'v1', program: 'python3', args: ['make.py', OUT], sources: ['make.py'], dir: project, executor: 'ray' });
}

function pipeline() {
  const make = makeStep();
  return command({
    name: 'count',
    version: 'v1',
    program: 'python3',
    args: ['count.py', input('data'), OUT],
    inputs: { data: make },
    env: { DATA: input('data'), RUNNER_PATHS: [project, join(project, 'count.py'), localRoot].join(':') },
    sources: ['count.py'],
    dir: project,
    executor: 'ray',
  });
}

describe.skipIf(missing !== undefined || !haveRgw)('command steps on a Ray cluster without the runner’s filesystem, through an S3 store (real RGW)', () => {
  const ray = (): RayExecutor => createRayExecutor({ address: cluster.address, pollIntervalMs: 300, sharedFs: false, storeCredentials: 'runtime-env' });
  const runner = (prefix: string, executor: RayExecutor) =>
    new StepRunner({ prefix, executors: [executor], logger: quiet, stores: [s3StoreFactory({ endpoint: rgw.endpoint, region: rgw.region, credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey }, localRoot, cacheDir: false })] });

  beforeAll(async () => {
    mkdirSync(project, { recursive: true });
    mkdirSync(localRoot, { recursive: true, mode: 0o700 });
    writeFileSync(join(project, 'make.py'), MAKE);
    writeFileSync(join(project, 'count.py'), COUNT);
    [rgw, cluster] = await Promise.all([startRgw(), startRay({ workers: 0, numCpus: 4, hide: [root] })]);
  }, 180_000);
  afterAll(async () => {
    await Promise.all([cluster?.stop(), rgw?.stop()]);
    rmSync(root, { recursive: true, force: true });
  }, 90_000);

  test('a dependency read from the bucket, the output uploaded to the attempt’s prefix and committed by record; a rerun is cached', async () => {
    const prefix = `s3://${rgw.bucket}/ray-${Date.now()}`;
    const first = ray();
    const r1 = runner(prefix, first);
    const step = pipeline();
    const [loaded] = await r1.load([step]);
    const value = loaded?.value as { words: number; note: string; data: string; env: string; cwd: string; seen: Record<string, boolean>; here: string[] };
    expect(value.words).toBe(5);
    expect(value.note).toBe('nested');
    // The job saw none of the runner's paths: its sources came in the package, its dependency from the bucket.
    expect(value.seen).toEqual({ [project]: false, [join(project, 'count.py')]: false, [localRoot]: false });
    expect(value.data.startsWith('/tmp/cairn-')).toBe(true);
    expect(value.env).toBe(value.data);
    expect(value.here).toEqual(['count.py']);
    expect(first.stats.submissions).toBe(2);
    expect(first.stats.packageUploads).toBe(2);
    // HTTP requests per step besides the shared status queries (and the one version check at start):
    // the package's GET (which pins it) and PUT (new content only), the submission, the log read at the end.
    expect(first.client.requests - first.stats.statusQueries - 1).toBe(2 * 4);

    // The output is the attempt's objects, named by the record.
    const store = r1.store as S3Store;
    const path = step.lower().outputPath(prefix);
    const { bucket, key } = store.s3.locate(path);
    const { prefix: objects } = await store.s3.committedObjects(path);
    expect(objects).toMatch(/^@.+\/$/);
    expect((await store.s3.objects.get(bucket, `${key}/${objects}count.txt`))?.body.toString()).toBe('5');
    const record = JSON.parse((await store.s3.objects.get(bucket, `${key}/.artifact.json`))?.body.toString() ?? '{}') as ArtifactRecord;
    expect(record.result).toMatchObject({ words: 5 });
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await store.s3.objects.list(bucket, { prefix: `${key}/`, continuationToken: token });
      keys.push(...page.objects.map((o) => o.key.slice(key.length + 1)));
      token = page.truncated ? page.next : undefined;
    } while (token !== undefined);
    // Output objects: exactly what the program wrote, under the prefix the record names.
    expect(keys.filter((k) => k.startsWith('@'))).toEqual([`${objects}count.txt`]);
    // The program's own output is the attempt's log (Ray's job log, read once when the job ended), without the result line.
    const log = (await store.s3.objects.get(bucket, `${key}/.cairn/logs/attempt-1.stdout`))?.body.toString() ?? '';
    expect(log).toContain('counted 5');
    expect(log).not.toContain('cairn-ray-result');

    const second = ray();
    expect((await runner(prefix, second).run([pipeline()])).counts).toEqual({ cached: 1 });
    expect(second.stats.submissions).toBe(0);
  }, 180_000);

  test.concurrent("a failing program's exit code and the tail of its log are reported", async () => {
    const prefix = `s3://${rgw.bucket}/ray-fail-${Date.now()}`;
    const step = command({ name: 'fails', version: 'v1', program: 'sh', args: ['-c', 'echo working; echo disk on fire >&2; exit 3'], executor: 'ray', retries: 0 });
    const err = await runner(prefix, ray())
      .run([step])
      .then(
        () => undefined,
        (e: unknown) => e as Error,
      );
    expect(err?.message).toMatch(/exited with code 3/);
    expect(err?.message).toContain('disk on fire');
  }, 120_000);

  test.concurrent("by default the nodes' own credentials are used: a cluster without any fails the step saying what to give", async () => {
    const prefix = `s3://${rgw.bucket}/ray-nocreds-${Date.now()}`;
    const step = command({ name: 'nocreds', version: 'v1', program: 'sh', args: ['-c', 'echo hi > "$CAIRN_OUTPUT/x"'], executor: 'ray', retries: 0 });
    const executor = createRayExecutor({ address: cluster.address, pollIntervalMs: 300, sharedFs: false });
    await expect(runner(prefix, executor).run([step])).rejects.toThrow(/the Ray node cannot upload the output of step "nocreds" to s3:\/\/[\s\S]*AWS_ACCESS_KEY_ID is not set on this Ray node[\s\S]*storeCredentials: 'runtime-env'/);
  }, 120_000);

  test.concurrent("an apply step runs there too: its module and Cairn's worker bundled into the package, its dependency read from the bucket, its output committed; a rerun is cached; a throw fails the step with its message", async () => {
    const prefix = `s3://${rgw.bucket}/ray-apply-${Date.now()}`;
    const count = () => apply({ name: 'count-words', fn: countWords, version: 'v1', executor: 'ray', inputs: { data: makeStep(), out: OUT } });
    const first = ray();
    const r1 = runner(prefix, first);
    const [loaded] = await r1.load([count()]);
    const value = loaded?.value as { words: number; data: string; module: string };
    expect(value.words).toBe(5);
    // The dependency came from the bucket into the job's work directory; the code is the bundle delivered with the job.
    expect(value.data).toMatch(/^\/tmp\/cairn-.+\/deps\/0$/);
    expect(value.module).toMatch(/^file:\/\/\/tmp\/cairn-.+\/code\/step\.mjs$/);
    expect(first.stats.submissions).toBe(2);
    const store = r1.store as S3Store;
    const path = count().lower().outputPath(prefix);
    const { bucket, key } = store.s3.locate(path);
    const { prefix: objects } = await store.s3.committedObjects(path);
    expect((await store.s3.objects.get(bucket, `${key}/${objects}count.txt`))?.body.toString()).toBe('5');

    const second = ray();
    expect((await runner(prefix, second).run([count()])).counts).toEqual({ cached: 1 });
    expect(second.stats.submissions).toBe(0);

    const fails = apply({ name: 'boom', fn: boom, version: 'v1', executor: 'ray', retries: 0, inputs: {} });
    await expect(runner(prefix, ray()).run([fails])).rejects.toThrow(/the apply step blew up/);
  }, 180_000);

  test.concurrent('refused before anything is submitted: a runtimeEnv.workingDir', async () => {
    const prefix = `s3://${rgw.bucket}/ray-refused-${Date.now()}`;
    const wd = createRayExecutor({ address: cluster.address, sharedFs: false, storeCredentials: 'runtime-env', runtimeEnv: { workingDir: 's3://b/src.zip' } });
    const step = command({ name: 'wd', version: 'v1', program: 'true', executor: 'ray', retries: 0 });
    await expect(runner(prefix, wd).run([step])).rejects.toThrow(/runtimeEnv\.workingDir \(s3:\/\/b\/src\.zip\) cannot be used without a shared filesystem/);
    expect(wd.stats.submissions).toBe(0);
  }, 60_000);

  test.concurrent("a job stopped on the node (the step's timeout) removes its work directory there and uploads nothing", async () => {
    const prefix = `s3://${rgw.bucket}/ray-stop-${Date.now()}`;
    const step = command({ name: 'stopme', version: 'v1', program: 'sh', args: ['-c', 'echo started > "$CAIRN_OUTPUT/partial"; sleep 60'], executor: 'ray', retries: 0, timeoutMs: 6000 });
    // Work directories of this job: `/tmp/cairn-<job>-<nonce>` made after the run started.
    const before = new Set(await readdir('/tmp'));
    const left = async () => (await readdir('/tmp')).filter((n) => n.startsWith(`cairn-${step.lower().nameWithHash}.`) && !before.has(n));
    const executor = ray();
    const r = runner(prefix, executor);
    await expect(r.run([step])).rejects.toThrow(/timed out|TIMEOUT|timeout/i);
    expect(executor.stats.stops).toBe(1);
    const store = r.store as S3Store;
    const { bucket, key } = store.s3.locate(step.lower().outputPath(prefix));
    const page = await store.s3.objects.list(bucket, { prefix: `${key}/` });
    expect(page.objects.map((o) => o.key).filter((k) => k.endsWith('/partial'))).toEqual([]);
    // The node's /tmp is this host's (only the test's directory is hidden from it): nothing of the job is left.
    for (let i = 0; i < 50 && (await left()).length > 0; i++) await new Promise((r) => setTimeout(r, 200));
    expect(await left()).toEqual([]);
  }, 120_000);
});
