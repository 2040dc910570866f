/**
 * Command steps on an s3:// prefix (hosts without a shared filesystem), against a real RADOS
 * Gateway, on the process, threads and inline executors: a real python3 program reads a dependency
 * that lives in the bucket (the runner fetches it through `ctx.localInput`, so the program gets
 * a local directory in its argv, environment and context file, never the s3:// URL) and writes
 * its output to a local directory that the commit uploads as the attempt's objects. A rerun is
 * cached.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { command, input, OUT } from '@cairn/core';
import { StepRunner } from '@cairn/runner';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3StoreFactory, S3Store } from '../src/index.js';
import { freshPrefix, haveRgw, useGateway } from './helpers.js';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const HELPER = fileURLToPath(new URL('../../../python', import.meta.url));

describe.skipIf(!haveRgw)('command steps on s3:// against a real RADOS Gateway: dependencies fetched, outputs uploaded', () => {
  const gw = useGateway();
  const project = mkdtempSync(join(tmpdir(), 'cairn-s3-command-'));
  const saved: Record<string, string | undefined> = {};
  beforeAll(() => {
    // Workers (threads, processes) build their own client from the standard AWS configuration.
    for (const [k, v] of Object.entries(gw.get().env)) {
      saved[k] = process.env[k];
      process.env[k] = v;
    }
    writeFileSync(
      join(project, 'make.py'),
      `import os, sys
out = sys.argv[1]
os.makedirs(os.path.join(out, "sub"), exist_ok=True)
with open(os.path.join(out, "data.txt"), "w") as f:
    f.write("a b c\\nd e\\n")
with open(os.path.join(out, "sub", "note.txt"), "w") as f:
    f.write("nested")
`,
    );
    writeFileSync(
      join(project, 'count.py'),
      `import os, sys
from cairn_step import context, report
c = context()
data, out = sys.argv[1], sys.argv[2]
with open(os.path.join(data, "data.txt")) as f:
    words = len(f.read().split())
with open(os.path.join(c.inputs["data"], "sub", "note.txt")) as f:
    note = f.read()
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "count.txt"), "w") as f:
    f.write(str(words))
report({"words": words, "note": note, "argv": sys.argv[1:], "env": os.environ["DATA"],
        "inputs": c.inputs["data"], "deps": list(c.dep_paths.values()), "out": c.output_path})
`,
    );
  });
  afterAll(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    rmSync(project, { recursive: true, force: true });
  });

  it.each(['process', 'threads', 'inline'] as const)('%s: a python3 step reads an s3:// dependency as a local directory; its output is exactly the attempt’s objects; a rerun is cached', { timeout: 180_000 }, async (executor) => {
    const rgw = gw.get();
    const prefix = freshPrefix(rgw, `cmd-${executor}`);
    const runner = new StepRunner({ prefix, stores: [s3StoreFactory({ endpoint: rgw.endpoint, region: rgw.region, cacheDir: join(project, `cache-${executor}`) })], logger: quiet });
    const env = { PYTHONPATH: HELPER };
    const make = command({ name: 'make', version: 'v1', program: 'python3', args: ['make.py', OUT], sources: ['make.py'], dir: project, executor, env });
    const count = command({
      name: 'count',
      version: 'v1',
      program: 'python3',
      args: ['count.py', input('data'), OUT],
      inputs: { data: make },
      env: { ...env, DATA: input('data') },
      sources: ['count.py'],
      dir: project,
      executor,
    });
    const [loaded, made] = await runner.load([count, make]);
    const value = loaded.value as { words: number; note: string; argv: string[]; env: string; inputs: string; deps: string[]; out: string };
    expect(made.path.startsWith('s3://')).toBe(true);
    expect(value.words).toBe(5);
    expect(value.note).toBe('nested');
    // The program saw one local directory for the dependency everywhere, never the URL.
    const local = value.argv[0] as string;
    expect(local.startsWith('/')).toBe(true);
    expect([value.env, value.inputs, ...value.deps]).toEqual([local, local, local]);
    // OUT was the attempt's local directory (count.txt below was uploaded from it); paths into it in the result are recorded as the output's URL.
    expect(value.out).toBe(loaded.path);
    expect(value.argv[1]).toBe(value.out);

    // Each output is exactly its attempt's objects: the prefix the record names, and nothing else beside the metadata.
    const store = runner.store as S3Store;
    for (const [path, files] of [
      [made.path, ['data.txt', 'sub/note.txt']],
      [loaded.path, ['count.txt']],
    ] as const) {
      const { bucket, key } = store.s3.locate(path);
      const { prefix: objects } = await store.s3.committedObjects(path);
      expect(objects).toMatch(/^@.+\/$/);
      const keys: string[] = [];
      let token: string | undefined;
      do {
        const page = await store.s3.objects.list(bucket, { prefix: `${key}/`, continuationToken: token });
        keys.push(...page.objects.map((o) => o.key.slice(key.length + 1)));
        token = page.truncated ? page.next : undefined;
      } while (token !== undefined);
      const outputs = keys.filter((k) => !k.startsWith('.')).sort();
      expect(outputs).toEqual(files.map((f) => `${objects}${f}`));
    }
    const { bucket, key } = store.s3.locate(loaded.path);
    const { prefix: objects } = await store.s3.committedObjects(loaded.path);
    expect((await store.s3.objects.get(bucket, `${key}/${objects}count.txt`))?.body.toString()).toBe('5');

    // Cached: nothing runs again.
    expect((await runner.run([count])).counts).toEqual({ cached: 1 });
    store.s3.destroy();
  });
});
