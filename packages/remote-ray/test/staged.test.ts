/**
 * The pure parts of a job without the runner's filesystem (command-staged.ts): the working_dir
 * package (read back by Python's zipfile, as Ray unpacks it), its content-addressed name, the
 * result line in Ray's job log, and the options.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { packageName } from '../src/staged-job.js';
import { RESULT_MARK } from '../src/far/s3-transfer-py.js';
import { resolveOptions } from '../src/options.js';
import { splitResult } from '../src/ray-log-result.js';
import { zipStored } from '../src/zip.js';

describe('the working_dir package', () => {
  test("is a zip Python's zipfile unpacks (Ray's way), keeping each file's content and mode", () => {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-ray-zip-'));
    try {
      const zip = join(dir, 'p.zip');
      writeFileSync(zip, zipStored([{ name: 'sources/run.sh', data: Buffer.from('#!/bin/sh\necho hi\n'), mode: 0o755 }, { name: 'a.py', data: Buffer.from('print("é")\n') }]));
      const py = `import json, os, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
print(json.dumps({i.filename: [z.read(i).decode(), (i.external_attr >> 16) & 0o777] for i in z.infolist()}))`;
      const out = JSON.parse(execFileSync('python3', ['-c', py, zip], { encoding: 'utf8' })) as Record<string, [string, number]>;
      expect(out).toEqual({ 'a.py': ['print("é")\n', 0o644], 'sources/run.sh': ['#!/bin/sh\necho hi\n', 0o755] });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('is named by its content (same files, same name, in any order), in the form Ray expects', () => {
    const a = { name: 'a', data: Buffer.from('1') };
    const b = { name: 'b', data: Buffer.from('2') };
    expect(packageName([a, b])).toBe(packageName([b, a]));
    expect(packageName([a, b])).not.toBe(packageName([a, { ...b, data: Buffer.from('3') }]));
    expect(packageName([a, b])).not.toBe(packageName([a, { ...b, mode: 0o755 }]));
    expect(packageName([a])).toMatch(/^_ray_pkg_[0-9a-f]{32}\.zip$/);
  });
});

describe("the result line in Ray's job log", () => {
  test('the last marked line is the result; marked lines are left out of the log', () => {
    const mark = (s: string) => `${RESULT_MARK}${Buffer.from(s).toString('base64')}`;
    const { log, result } = splitResult(['hello', mark('{"result":1}'), 'more', mark('{"result":2}'), ''].join('\n'));
    expect(log).toBe('hello\nmore\n');
    expect(result?.toString()).toBe('{"result":2}');
    expect(splitResult('just output\n').result).toBeUndefined();
  });
});

describe('options without a shared filesystem', () => {
  test("default to the nodes' own credentials and /tmp; refuse other values saying what to give", () => {
    const o = resolveOptions({ address: 'http://h:8265' }, {});
    expect([o.storeCredentials, o.nodeTempDir]).toEqual(['node', '/tmp']);
    expect(resolveOptions({ address: 'http://h:8265', storeCredentials: 'runtime-env', nodeTempDir: '/scratch/' }, {})).toMatchObject({ storeCredentials: 'runtime-env', nodeTempDir: '/scratch' });
    expect(() => resolveOptions({ address: 'http://h:8265', storeCredentials: 'env' as never }, {})).toThrow(/"storeCredentials" must be 'node' or 'runtime-env'/);
    expect(() => resolveOptions({ address: 'http://h:8265', nodeTempDir: 'tmp' }, {})).toThrow(/"nodeTempDir" must be an absolute path/);
    expect(() => resolveOptions({ address: 'http://h:8265', storeCredential: 'node' } as never, {})).toThrow(/storeCredentials/);
  });
});
