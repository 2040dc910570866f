/**
 * What steps write to stdout/stderr (`console.log`) goes to the step's log and is shown above
 * the live display, on every local executor; on a real TTY (util-linux `script`) the display
 * stays intact. The screen is checked by replaying the bytes through a small terminal emulator.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunnerEvent } from '@cairn/runner';
import pc from 'picocolors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Progress } from '../src/ui/progress.js';
import { assertBuilt, BIN, cairn, cliEnv, makeProject } from './helpers/cli.js';
import { replay } from './helpers/vterm.js';

const SAID = ['hello from', 'after await', 'warning from'];
const WHO = ['inline', 'threads', 'process'];

describe('the live display with step output (Progress on a TTY)', () => {
  it('prints what a running step writes above the bar; the bar stays one block at the bottom', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-progress-'));
    try {
      const files = { stdout: join(dir, 'out'), stderr: join(dir, 'err') };
      let tty = '';
      const p = new Progress({ mode: 'tty', write: (s) => (tty += s), colors: pc.createColors(false), columns: () => 100, showOutput: true });
      const ev = (step: string, state: string, extra: Record<string, unknown> = {}) =>
        ({ type: 'step', runId: 'r', step, path: `/s/${step}/v1`, state, time: Date.now(), ...extra }) as unknown as RunnerEvent;
      p.onEvent(ev('train', 'running', { attempt: 1, logs: files }));
      p.onEvent(ev('eval', 'pending'));
      for (let i = 1; i <= 3; i++) {
        appendFileSync(files.stdout, `epoch ${i} loss 0.${9 - i}\n`);
        await new Promise((r) => setTimeout(r, 150));
      }
      appendFileSync(files.stderr, 'warning: lr too high\n');
      await new Promise((r) => setTimeout(r, 250));
      const during = replay(tty);
      expect(during.filter((l) => l.includes('0/2'))).toHaveLength(1); // one bar, not one per write
      expect(during.slice(-2)[0]).toMatch(/0\/2 .*1 running · 1 pending/); // the block is the last two rows
      expect(during.at(-1)).toMatch(/▶ train\/v1/);
      expect(during.slice(0, -2)).toEqual(['train │ epoch 1 loss 0.8', 'train │ epoch 2 loss 0.7', 'train │ epoch 3 loss 0.6', 'train │ warning: lr too high']);
      appendFileSync(files.stdout, 'saved'); // a last line without its newline
      p.onEvent(ev('train', 'succeeded', { attempt: 1 }));
      p.finish();
      const after = replay(tty);
      expect(after.slice(-2)).toEqual(['train │ saved', expect.stringMatching(/^done {5}train /)]);
      expect(after.some((l) => l.includes('░'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('console output of steps (the built CLI)', () => {
  let project: ReturnType<typeof makeProject>;
  beforeAll(() => {
    assertBuilt();
    project = makeProject(['chatty.mjs']);
  });
  afterAll(() => project?.cleanup());

  it('lands in `cairn logs` for inline, threads and process steps, and in the run output with the step name', () => {
    const r = cairn(project.dir, ['run', 'chatty.mjs', '--prefix', project.prefix]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    for (const who of WHO) {
      for (const said of SAID) expect(r.stdout).toMatch(new RegExp(`talk-${who} │ ${said} ${who}\\n`));
      const logs = cairn(project.dir, ['logs', `talk-${who}`, '--prefix', project.prefix]);
      expect(logs.code, logs.stderr).toBe(0);
      expect(logs.stdout.trim().split('\n').sort()).toEqual(SAID.map((s) => `${s} ${who}`).sort());
    }
    // Nothing reached the terminal around the display.
    expect(r.stdout.split('\n').filter((l) => /^(hello from|after await|warning from)/.test(l))).toEqual([]);
    expect(r.stderr).not.toMatch(/warning from/);
  });

  it('streams it as JSON lines with --json', () => {
    const r = cairn(project.dir, ['run', 'chatty.mjs', '--prefix', join(project.dir, 'json-store'), '--json']);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; step?: string; stream?: string; line?: string });
    const output = lines.filter((l) => l.type === 'output');
    expect(output).toContainEqual(expect.objectContaining({ step: 'talk-threads', stream: 'stderr', line: 'warning from threads' }));
    expect(output).toHaveLength(9);
  });

  const haveScript = existsSync('/usr/bin/script');
  it.skipIf(!haveScript && !process.env.CI)('keeps the live block intact on a real terminal', () => {
    const store = join(project.dir, 'tty-store');
    const cmd = `stty cols 110 rows 40; exec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} run chatty.mjs --prefix ${JSON.stringify(store)}`;
    const r = spawnSync('script', ['-qfec', cmd, '/dev/null'], { cwd: project.dir, env: cliEnv({ FX_TALK_MS: '400' }), encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('\u001b[2A\u001b[0J'); // it did draw and erase a live block
    const screen = replay(r.stdout);
    for (const who of WHO) for (const said of SAID) expect(screen.filter((l) => l === `talk-${who} │ ${said} ${who}`), `${said} ${who}`).toHaveLength(1);
    expect(screen.filter((l) => l.includes('░') || l.includes('▶'))).toEqual([]); // no bar left behind
    expect(screen.at(-1)).toMatch(/^✓ 3 succeeded in /);
  });
});
