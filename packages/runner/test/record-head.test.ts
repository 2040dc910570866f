/** recordHead: a record's identity fields without parsing it, always as JSON.parse would give them. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apply, lower, OUT, StepSpec } from '@cairn/core';
import { StepRunner } from '../src/index.js';
import { recordHead, recordHeadIn } from '../src/store/record-head.js';
import { parseRecord } from '../src/store/records.js';
import { memoryLogger, tempDirs } from './helpers/graph.js';

const dir = tempDirs();

/** recordHeadIn of `text` inside a batch's bytes, between other files' bytes that look like records too. */
function headInBatch(text: string) {
  const before = Buffer.from('{\n  "cairn": 1,\n  "name": "before"\n}\n');
  const after = Buffer.from('\n  "version": "after",\n  "outputPath": "/after"\n}\n');
  const own = Buffer.from(text);
  return recordHeadIn(Buffer.concat([before, own, after]), before.length, before.length + own.length);
}
const FIELDS = ['cairn', 'name', 'nameWithHash', 'version', 'outputPath'] as const;
const fieldsOf = (r: Record<string, unknown> | null | undefined) => (r ? Object.fromEntries(FIELDS.filter((k) => r[k] !== undefined).map((k) => [k, r[k]])) : null);

/** Records the runner wrote: a lazy step with a tricky path, a plain StepSpec. */
async function records(): Promise<string[]> {
  const prefix = join(dir(), 'odd "dir" \\ é\u2028');
  const a = lower(apply({ name: 'tok"en', version: 'v\\1', inputs: { s: '\n  "name": "fake"', out: OUT, nested: { name: 'x', list: [{ outputPath: 'y' }] } }, fn: () => ({ name: 'result' }) }));
  const b = new StepSpec({ name: 'plain', hashAttrs: { nameWithHash: 'no' }, deps: [a], fn: () => undefined });
  await new StepRunner({ prefix, logger: memoryLogger() }).run([b]);
  return [a, b].map((s) => readFileSync(join(s.outputPath(prefix), '.artifact.json'), 'utf8'));
}

describe('recordHead', () => {
  it('gives the fields JSON.parse gives, on records the runner wrote (escapes, look-alike keys in values)', async () => {
    for (const text of await records()) {
      for (const h of [recordHead(text), headInBatch(text)]) {
        expect(h.problem).toBeUndefined();
        expect(fieldsOf(h.head as Record<string, unknown>)).toEqual(fieldsOf(JSON.parse(text)));
      }
    }
  });

  it('finds top-level members only, wherever they are (look-alike keys nested or ending the same before them)', () => {
    const text = `${JSON.stringify({ cairn: 1, config: { version: 'inner', name: 'inner' }, subversion: 'no', fullname: 'no', name: 'n', nameWithHash: 'n-1', outputPath: '/p', version: 'outer' }, null, 2)}\n`;
    for (const h of [recordHead(text), headInBatch(text)]) expect(fieldsOf(h.head as Record<string, unknown>)).toEqual(fieldsOf(JSON.parse(text)));
  });

  it('a record cut short anywhere is unusable, as JSON.parse says', async () => {
    const [text] = await records();
    for (let cut = 0; cut < (text as string).trimEnd().length; cut++) {
      const part = (text as string).slice(0, cut);
      const h = recordHead(part);
      let parses = true;
      try {
        JSON.parse(part);
      } catch {
        parses = false;
      }
      expect(h.head === null, `cut at ${cut}`).toBe(!parses);
      expect(headInBatch(part), `cut at ${cut}, in a batch`).toEqual(h);
    }
  });

  it("parses anything else whole: compact JSON, Marin's records, garbage", () => {
    const compact = JSON.stringify({ cairn: 1, name: 'n', nameWithHash: 'n-1', outputPath: '/p' });
    expect(recordHead(compact).head).toMatchObject({ name: 'n', nameWithHash: 'n-1' });
    expect(recordHead('{"name": "marin", "version": "2026.11.30"}').head).toMatchObject({ name: 'marin' });
    expect(headInBatch(compact)).toEqual(recordHead(compact));
    for (const bad of ['', 'garbage', '{"cairn": 1, "name"', '[1]']) {
      expect(recordHead(bad).head, bad).toBeNull();
      expect(recordHead(bad).problem).toBe(parseRecord(bad).problem);
      expect(headInBatch(bad)).toEqual(recordHead(bad));
    }
  });
});
