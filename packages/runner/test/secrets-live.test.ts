/**
 * A running attempt's log never holds a secret: where the runner writes the bytes (`inline` with
 * captured output, `threads`) they are masked on write, also a value split across two writes
 * with a pause between (the file is sampled while the step runs); the attempt's declared names
 * are beside its logs before it starts, so a reader masks with the values its providers resolve
 * or withholds the log when they resolve none.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apply, secret } from '@cairn/core';
import { createInlineExecutor, LiveLogMasks, StepRunner, tailLogs } from '../src/index.js';
import { Masker } from '../src/secrets/mask.js';
import { secretNamesFileOf } from '../src/secrets/attempt-names.js';
import { slowEcho } from './fixtures/secret-steps.mjs';
import { tempDirs } from './helpers/graph.js';

const tmp = tempDirs();

/** Every `attempt-N.stdout` under `dir`. */
function stdoutLogs(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...stdoutLogs(p));
    else if (/^attempt-\d+\.stdout$/.test(e.name)) out.push(p);
  }
  return out;
}

describe('the masker', () => {
  it('gives bytes back at once, holding only a tail that may start a value', () => {
    const m = new Masker(['tok-secret']);
    expect(m.push(Buffer.from('line one\nline two ')).toString()).toBe('line one\nline two ');
    expect(m.push(Buffer.from('a tok-se')).toString()).toBe('a ');
    expect(m.held).toBe(6);
    expect(m.push(Buffer.from('cret and tok')).toString()).toBe('*** and ');
    expect(m.end().toString()).toBe('tok');
  });
});

describe('live logs', () => {
  it.each(['inline', 'threads'] as const)('%s: the log file never holds the value while the step runs; readers mask it or withhold it', async (executor) => {
    const token = `tok-${randomBytes(12).toString('hex')}`;
    const prefix = tmp();
    const file = join(tmp(), 'secrets.env');
    writeFileSync(file, `HF_TOKEN=${token}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
    const step = apply({ name: 'slow', version: 'v1', fn: slowEcho, inputs: { token: secret('HF_TOKEN') }, executor: executor === 'inline' ? 'captured' : 'threads' });
    const runner = new StepRunner({ prefix, secrets: { providers: [{ type: 'file', path: file }] }, executors: { captured: createInlineExecutor({ captureOutput: true }) } });
    const seen: string[] = [];
    const views: string[] = [];
    let done = false;
    const sampling = (async () => {
      const withProvider = new LiveLogMasks([{ type: 'file', path: file }]);
      const without = new LiveLogMasks([{ type: 'env', prefix: 'CAIRN_TEST_NOWHERE_' }]);
      while (!done) {
        let found: string[];
        try {
          found = stdoutLogs(prefix);
        } catch {
          continue; // the staged directory was renamed into place meanwhile
        }
        for (const log of found) {
          let text: string;
          try {
            text = readFileSync(log, 'utf8');
          } catch {
            continue;
          }
          seen.push(text);
          if (!text.includes('done')) continue;
          const logs = { stdout: log, stderr: log.replace(/stdout$/, 'stderr') };
          const [a, b] = await Promise.all([withProvider.viewOf(logs, 1), without.viewOf(logs, 1)]);
          views.push(`${a.show}/${b.show}`);
          if (a.show === 'masked') expect(a.values).toEqual([token]);
          if (b.show === 'withheld') expect(b.notice).toContain('HF_TOKEN');
          const lines: string[] = [];
          for await (const l of tailLogs(logs, { follow: false, isRunning: () => false, mask: a.show === 'masked' ? a.values : [] })) lines.push(l);
          seen.push(lines.join('\n'));
        }
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    try {
      expect((await runner.run([step])).counts).toEqual({ succeeded: 1 });
    } finally {
      done = true;
      await sampling;
    }
    // Sampled between the two writes and after the second, while the step slept.
    expect(seen.some((t) => t.includes('slow ') && !t.includes('done'))).toBe(true);
    expect(seen.some((t) => t.includes('slow *** done'))).toBe(true);
    expect(seen.filter((t) => t.includes(token))).toEqual([]);
    // While it ran, a reader with the provider masked, one without withheld.
    expect(views).toContain('masked/withheld');
    // Once the attempt ended (masked, committed): the names file says so, and readers show it as it is.
    const [committed] = stdoutLogs(prefix);
    expect(JSON.parse(readFileSync(secretNamesFileOf(committed as string), 'utf8'))).toEqual({ names: ['HF_TOKEN'], masked: true });
    expect(await new LiveLogMasks([]).viewOf({ stdout: committed as string }, 1)).toEqual({ show: 'as-is' });
  }, 60_000);
});
