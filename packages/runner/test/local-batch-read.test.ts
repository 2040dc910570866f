/**
 * The local store's batch reads (store/local/batch-read.ts): read on libuv's threads by
 * `@cairn/native`, they give exactly what reading each file on the main thread gives — texts,
 * missing files, error codes and messages, and the states built from them.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import native from '@cairn/native';
import { drive } from '../src/maybe.js';
import { BATCH_MIN, batchReadsNative, type FilePairs, type FileTexts, readInDirs, readSequential, readThenInDirs } from '../src/store/local/batch-read.js';
import { syncIo } from '../src/store/local/io.js';
import { readOne, readStatesParallel } from '../src/store/local/read-ops.js';
import { LocalStore } from '../src/store/local/store.js';
import type { RecordWant, StoredState } from '../src/store/store.js';
import { tempDirs } from './helpers/graph.js';

const dir = tempDirs();

const record = (name: string, path: string, extra = '') =>
  `${JSON.stringify({ cairn: 1, name, nameWithHash: `${name}-0123456789abcdef`, outputPath: path, config: { note: extra } }, null, 2)}\n`;

/** Step directories of every kind a reader meets, `copies` times over (so a batch is large). */
function storeFixture(copies: number): string[] {
  const root = join(dir(), 'store é ünï');
  const paths: string[] = [];
  for (let c = 0; c < copies; c++) {
    const at = (name: string) => {
      const p = join(root, `${name}-${c}`);
      paths.push(p);
      return p;
    };
    /** A step directory with a status file and a record (made from its path) where given. */
    const step = (name: string, status?: string, recordOf?: (p: string) => string) => {
      const p = at(name);
      mkdirSync(p, { recursive: true });
      if (status !== undefined) writeFileSync(join(p, '.executor_status'), status);
      if (recordOf !== undefined) writeFileSync(join(p, '.artifact.json'), recordOf(p));
      return p;
    };
    step('built', 'SUCCESS', (p) => record(`built-${c}`, p, 'naïve ✓ \u2028'));
    step('big', 'SUCCESS\n', (p) => record(`big-${c}`, p, 'x'.repeat(200_000)));
    step('failed', 'FAILED');
    step('garbage-status', '\u0000\u00ffnot a status');
    step('no-record', 'SUCCESS');
    step('empty-record', 'SUCCESS', () => '');
    step('cut-record', 'SUCCESS', (p) => record(`cut-${c}`, p).slice(0, 40));
    mkdirSync(join(step('dir-record', 'SUCCESS'), '.artifact.json'));
    mkdirSync(join(step('status-is-dir'), '.executor_status'));
    writeFileSync(at('file-not-dir'), 'a file where a step directory belongs');
    at('absent');
    symlinkSync(join(root, `built-${c}`), at('linked'));
  }
  paths.push('s3://bucket/not-local');
  return paths;
}

const plain = (t: FileTexts) =>
  Array.from({ length: t.length }, (_, i) => {
    const r = t.at(i);
    return r instanceof Error ? { message: r.message, code: (r as NodeJS.ErrnoException).code } : r;
  });

describe('batch reads of small files', () => {
  it.runIf(batchReadsNative)('native: the texts, missing files and errors (code and message) of reading each file with fs', async () => {
    const steps = storeFixture(2).filter((p) => !p.startsWith('s3:'));
    const loop = join(dir(), 'loop');
    mkdirSync(loop);
    symlinkSync(join(loop, '.executor_status'), join(loop, '.executor_status'));
    // ENAMETOOLONG and ELOOP fail the open itself (EACCES would too, but not for root); the
    // relative directory and the ones below unrelated parents leave no common base.
    const dirs = [...steps, loop, join(dir(), 'n'.repeat(300)), 'relative/missing', join(steps[0] as string, '..', '..', 'elsewhere')];
    const codes = new Set<string>();
    for (const name of ['.executor_status', '.artifact.json']) {
      for (const set of [dirs, steps]) {
        const seq = readSequential(set.map((d) => `${d}/${name}`));
        expect(plain((await readInDirs(set, name)) as FileTexts), name).toEqual(plain(seq));
        // noLinks: a file behind a link is read here instead, with the same answer.
        expect(plain((await readInDirs(set, name, true)) as FileTexts), `${name}, noLinks`).toEqual(plain(seq));
        for (const x of plain(seq)) if (typeof x === 'object' && x !== null) codes.add((x as { code: string }).code);
      }
    }
    expect(codes).toEqual(new Set(['EISDIR', 'ENAMETOOLONG', 'ELOOP']));
  });

  it.runIf(batchReadsNative)('noLinks: a file read from a real directory is known link-free; one behind a link is not', async () => {
    const steps = storeFixture(1).filter((p) => !p.startsWith('s3:'));
    const texts = (await readInDirs(steps, '.executor_status', true)) as FileTexts;
    const free = (name: string) => texts.linkFree(steps.findIndex((p) => p.endsWith(`/${name}-0`)));
    expect([free('built'), free('failed'), free('linked'), free('absent')]).toEqual([true, true, false, false]);
    expect(texts.at(steps.findIndex((p) => p.endsWith('/linked-0')))).toBe('SUCCESS');
    const plainRead = (await readInDirs(steps, '.executor_status')) as FileTexts;
    expect(steps.some((_, i) => plainRead.linkFree(i))).toBe(false);
  });

  it.runIf(batchReadsNative)('readThenInDirs: the first files as readInDirs reads them, the second exactly where the first is the token', async () => {
    const steps = storeFixture(2).filter((p) => !p.startsWith('s3:'));
    const dirs = [...steps, join(dir(), 'n'.repeat(300)), 'relative/missing'];
    const pairs = (await readThenInDirs(dirs, '.executor_status', 'SUCCESS', '.artifact.json')) as FilePairs;
    expect(plain(pairs.first)).toEqual(plain((await readInDirs(dirs, '.executor_status', true)) as FileTexts));
    const records = plain(readSequential(dirs.map((d) => `${d}/.artifact.json`)));
    const asked = dirs.map((_, i) => pairs.asked(i));
    expect(asked).toEqual(dirs.map((_, i) => pairs.first.at(i) === 'SUCCESS' && pairs.first.linkFree(i)));
    expect(asked.filter(Boolean).length).toBe(2 * 5); // built, no-record, empty-, cut- and dir-record
    for (let i = 0; i < dirs.length; i++) if (asked[i]) expect(plain({ ...pairs.then, length: 1, at: () => pairs.then.at(i) })[0], dirs[i]).toEqual(records[i]);
    const d = dir();
    const nul = (await readThenInDirs([join(d, 'a\0b'), join(d, 'plain')], 'f', 'SUCCESS', 'g')) as FilePairs;
    expect([nul.asked(0), nul.asked(1), plain(nul.first)]).toEqual([false, false, plain(readSequential([join(d, 'a\0b', 'f'), join(d, 'plain', 'f')]))]);
  });

  it.runIf(batchReadsNative)('a name holding a NUL byte cannot reach the native side: the batch is read as fs reads it', async () => {
    const dirs = [join(dir(), 'a\0b'), join(dir(), 'plain')];
    expect(plain((await readInDirs(dirs, 'f')) as FileTexts)).toEqual(plain(readSequential(dirs.map((d) => `${d}/f`))));
  });

  it.runIf(batchReadsNative)('states: every want, as readOne reads each step', async () => {
    const paths = storeFixture(3);
    for (const want of [false, true, 'head'] as RecordWant[]) {
      const one = paths.map((p) => drive(readOne(syncIo, p, want)) as StoredState);
      expect(await readStatesParallel(paths, () => want), String(want)).toEqual(one);
    }
    // Every step wants its record, some whole and some its head: statuses and records come in one batch.
    const mixed = (i: number): RecordWant => (i % 2 === 0 ? 'head' : true);
    const one = paths.map((p, i) => drive(readOne(syncIo, p, mixed(i))) as StoredState);
    expect(await readStatesParallel(paths, mixed)).toEqual(one);
  });

  it('a LocalStore answers a large batch the same with and without the native module', async () => {
    const paths = storeFixture(Math.ceil(BATCH_MIN / 12) + 1);
    expect(paths.length).toBeGreaterThanOrEqual(BATCH_MIN);
    const wants: RecordWant[] = paths.map((_, i) => (['head', true, false] as const)[i % 3] as RecordWant);
    const got = await new LocalStore().readStates(paths, wants);
    const one = paths.map((p, i) => drive(readOne(syncIo, p, wants[i] as RecordWant)) as StoredState);
    expect(got).toEqual(one);
    expect(batchReadsNative).toBe(native.binding !== null);
  });
  it('probeText (for files usually absent) answers exactly as readText: texts, misses, error codes and messages', () => {
    const steps = storeFixture(1).filter((p) => !p.startsWith('s3:'));
    const loop = join(dir(), 'probe-loop');
    mkdirSync(loop);
    symlinkSync(join(loop, '.executor_status'), join(loop, '.executor_status'));
    const answer = (read: (f: string) => unknown, f: string) => {
      try {
        return read(f);
      } catch (err) {
        return { message: (err as Error).message, code: (err as NodeJS.ErrnoException).code };
      }
    };
    const codes = new Set<string>();
    for (const d of [...steps, loop, join(dir(), 'n'.repeat(300))]) {
      for (const name of ['.executor_status', '.artifact.json', '.executor_status.lock']) {
        const f = `${d}/${name}`;
        const want = answer((x) => syncIo.readText(x), f);
        expect(answer((x) => syncIo.probeText(x), f), f).toEqual(want);
        if (typeof want === 'object' && want !== null) codes.add((want as { code: string }).code);
      }
    }
    // The fixture reaches every kind of answer: a text, a miss (ENOENT, ENOTDIR) and real errors.
    expect([...codes].sort()).toEqual(['EISDIR', 'ELOOP', 'ENAMETOOLONG']);
  });
});
