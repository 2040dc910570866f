/**
 * The UI's log tail of a step the journal still calls running (web/step-detail.ts `stepLog`): real
 * files in a temporary store. Once the attempt's logs are where attempts are committed (masked
 * before that, attempt-mask.ts), the attempt has ended, whatever the journal says yet: they are
 * shown as committed, not live, and not withheld (the race `secrets-live.e2e.test.ts` met in CI).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { attemptFilesIn, type LiveLogMasks } from '@cairn/runner';
import { stepLog } from '../src/web/step-detail.js';
import type { RunFold } from '../src/web/run-fold.js';
import type { StoreView } from '../src/store-view.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function setup() {
  const prefix = mkdtempSync(join(tmpdir(), 'cairn-step-log-'));
  dirs.push(prefix);
  const path = join(prefix, 'slowcmd', 'v1-0123456789abcdef');
  const staged = { stdout: join(prefix, 'slowcmd', '.v1-0123456789abcdef.attempt-1', 'stdout'), stderr: join(prefix, 'slowcmd', '.v1-0123456789abcdef.attempt-1', 'stderr') };
  const view = {
    prefix,
    rel: (p: string) => relative(prefix, p),
    readText: (p: string) => readFile(p, 'utf8').catch(() => null),
  } as unknown as StoreView;
  const run = { prefix, steps: [{ name: 'slowcmd', path, attempts: 1, state: 'running', logs: staged }] } as unknown as RunFold;
  // A reader whose providers cannot resolve the step's secret: a running attempt's lines are withheld.
  const masks = { viewOf: async () => ({ show: 'withheld', notice: 'HF_TOKEN is withheld while the attempt runs' }) } as unknown as LiveLogMasks;
  const write = (file: string, text: string) => {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  };
  return { path, staged, view, run, masks, write };
}

describe('stepLog of a step the journal calls running', () => {
  it('withholds the staged log of a running attempt', async () => {
    const { staged, view, run, masks, write } = setup();
    write(staged.stdout, 'got hf_secret\n');
    write(staged.stderr, '');
    expect(await stepLog(view, run, masks, 0)).toEqual({ attempt: 1, lines: ['HF_TOKEN is withheld while the attempt runs'], live: true });
  });

  it('shows committed logs as ended: the attempt finished before the journal said so', async () => {
    const { path, view, run, masks, write } = setup();
    const committed = attemptFilesIn(path, 1);
    write(committed.stdout, 'got ***\nfull ***\nfinished\n');
    write(committed.stderr, '');
    expect(await stepLog(view, run, masks, 0)).toEqual({ attempt: 1, lines: ['got ***', 'full ***', 'finished'], live: false });
  });
});
