/**
 * The store prefix through the BUILT binary, as users met it: a bad prefix (empty, blank,
 * `~user`, under /proc) is refused before anything is written or removed; `~` is expanded from
 * flags, `CAIRN_PREFIX` and the config file alike; `clean` acts only on a Cairn store; `status`
 * reads the configured lease timing; SIGTERM cancels a run like Ctrl-C.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cairn, cairnAsync, makeProject, waitFor } from './helpers/cli.js';

let project: ReturnType<typeof makeProject>;
let dir: string;
let home: string;

/** A user's directory that happens to hold a `.executor_status` file (what `clean --prefix ""` once removed). */
function userFiles(root: string): string {
  const notes = join(root, 'notes');
  mkdirSync(notes, { recursive: true });
  writeFileSync(join(notes, '.executor_status'), 'my own status file\n');
  writeFileSync(join(notes, 'thesis.txt'), 'five years of work');
  return notes;
}

/** Entries of `root`, sorted (to show nothing was created or removed). */
const entries = (root: string) => readdirSync(root).sort();

beforeAll(() => {
  assertBuilt();
  project = makeProject(['pipeline.mjs']);
  dir = project.dir;
  home = mkdtempSync(join(tmpdir(), 'cairn-home-'));
});
afterAll(() => {
  project?.cleanup();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('a bad prefix is refused before anything happens', () => {
  it('--prefix "": run and clean --yes exit 2 with CAIRN_INVALID_PATH; the working directory is untouched', () => {
    const notes = userFiles(dir);
    const before = entries(dir);
    const run = cairn(dir, ['run', 'pipeline.mjs', '--prefix', '']);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain('CAIRN_INVALID_PATH');
    const clean = cairn(dir, ['clean', 'pipeline.mjs', '--prefix', '', '--yes']);
    expect(clean.code, clean.stderr).toBe(2);
    expect(clean.stderr).toContain('CAIRN_INVALID_PATH');
    expect(entries(dir)).toEqual(before);
    expect(readFileSync(join(notes, 'thesis.txt'), 'utf8')).toBe('five years of work');
  });

  it.each([[' '], ['\t'], ['~nobody/x'], ['~nobody']])('--prefix %j is refused (exit 2, CAIRN_INVALID_PATH), creating nothing', (prefix) => {
    const before = entries(dir);
    for (const cmd of [['run', 'pipeline.mjs'], ['status'], ['clean', '--yes']]) {
      const r = cairn(dir, [...cmd, '--prefix', prefix]);
      expect(r.code, `${cmd[0]}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain('CAIRN_INVALID_PATH');
    }
    expect(entries(dir)).toEqual(before);
  });

  it('an empty or blank CAIRN_PREFIX is refused as the runner refuses it', () => {
    const before = entries(dir);
    for (const value of ['', '  ']) {
      const r = cairn(dir, ['run', 'pipeline.mjs'], { CAIRN_PREFIX: value });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain('CAIRN_INVALID_PATH');
      expect(r.stderr).toContain('CAIRN_PREFIX');
    }
    expect(entries(dir)).toEqual(before);
  });

  it.each([['/proc/cairn-store'], ['/proc'], ['/sys/cairn'], ['file:///proc/x']])('a prefix under /proc or /sys (%s) is refused at once', (prefix) => {
    const r = cairn(dir, ['run', 'pipeline.mjs', '--prefix', prefix]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('CAIRN_INVALID_PATH');
    expect(r.stderr).toMatch(/\/proc|\/sys/);
  });
});

describe('~ is expanded to the home directory everywhere', () => {
  it('CAIRN_PREFIX="~/x" builds under $HOME/x, not ./~', () => {
    const r = cairn(dir, ['run', 'pipeline.mjs'], { CAIRN_PREFIX: '~/x', HOME: home });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(home, 'x', 'prepare'))).toBe(true);
    expect(existsSync(join(dir, '~'))).toBe(false);
    const config = JSON.parse(cairn(dir, ['config', '--json'], { CAIRN_PREFIX: '~/x', HOME: home }).stdout);
    expect(config.prefix).toBe(join(home, 'x'));
    expect(config.sources.prefix).toBe('env');
  });

  it("a config file's prefix: '~/y' builds under $HOME/y, not next to the config file", () => {
    const proj = mkdtempSync(join(tmpdir(), 'cairn-cfg-'));
    try {
      writeFileSync(join(proj, 'cairn.config.mjs'), "export default { prefix: '~/y' };\n");
      const r = cairn(dir, ['run', 'pipeline.mjs', '--config', join(proj, 'cairn.config.mjs')], { HOME: home });
      expect(r.code, r.stderr).toBe(0);
      expect(existsSync(join(home, 'y', 'prepare'))).toBe(true);
      expect(existsSync(join(proj, '~'))).toBe(false);
      expect(existsSync(join(dir, '~'))).toBe(false);
    } finally {
      rmSync(proj, { recursive: true, force: true });
    }
  });

  it('--prefix "~" and "~/z" are expanded too', () => {
    const r = cairn(dir, ['config', '--json', '--prefix', '~/z'], { HOME: home });
    expect(JSON.parse(r.stdout).prefix).toBe(join(home, 'z'));
    expect(JSON.parse(cairn(dir, ['config', '--json', '--prefix', '~'], { HOME: home }).stdout).prefix).toBe(home);
  });
});

describe('clean acts only on a Cairn store', () => {
  it('refuses a directory that is not a store (exit 2, CAIRN_NOT_A_STORE), removing nothing', () => {
    const mine = mkdtempSync(join(tmpdir(), 'cairn-mine-'));
    try {
      const notes = userFiles(mine);
      mkdirSync(join(mine, 'sub', 'deeper'), { recursive: true });
      writeFileSync(join(mine, 'sub', 'deeper', '.executor_status'), 'FAILED');
      for (const args of [['clean', '--prefix', mine, '--yes'], ['clean', 'pipeline.mjs', '--prefix', mine, '--yes']]) {
        const r = cairn(dir, args);
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toContain('CAIRN_NOT_A_STORE');
        expect(r.stderr).toContain(mine);
      }
      expect(existsSync(join(notes, '.executor_status'))).toBe(true);
      expect(existsSync(join(mine, 'sub', 'deeper', '.executor_status'))).toBe(true);
    } finally {
      rmSync(mine, { recursive: true, force: true });
    }
  });

  it('a run marks its store; clean works there, and on an older store without the marker that holds Cairn records', () => {
    const prefix = join(dir, 'marked');
    expect(cairn(dir, ['run', 'pipeline.mjs', '--prefix', prefix], { FX_FAIL: '1' }).code).toBe(1);
    const marker = JSON.parse(readFileSync(join(prefix, '.cairn', 'store.json'), 'utf8'));
    expect(marker).toMatchObject({ format: 'cairn-store', version: 1 });
    const r = cairn(dir, ['clean', '--prefix', prefix]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/would remove train\/v1-[0-9a-f]{16} \(failed\)/);
    // A store an earlier version wrote: no marker, but Cairn's records.
    rmSync(join(prefix, '.cairn', 'store.json'));
    const legacy = cairn(dir, ['clean', '--prefix', prefix, '--yes']);
    expect(legacy.code, legacy.stderr).toBe(0);
    expect(legacy.stdout).toMatch(/removed train\/v1-[0-9a-f]{16} \(failed\)/);
    expect(existsSync(join(prefix, 'prepare'))).toBe(true);
  });
});

describe('status reads the configured lease timing', () => {
  it('a lease older than leases.staleMs is STALE_LEASE (not the hard-coded 90 s)', () => {
    const proj = mkdtempSync(join(tmpdir(), 'cairn-lease-'));
    try {
      const prefix = join(proj, 'store');
      expect(cairn(dir, ['run', 'pipeline.mjs', '--prefix', prefix]).code).toBe(0);
      const train = readdirSync(join(prefix, 'train')).find((n) => /^v1-/.test(n)) as string;
      // A holder on another host (no pid check), refreshed 10 s ago.
      const lease = { worker_id: 'w', timestamp: Date.now() / 1000 - 10, host: 'elsewhere.example', pid: 1, processStartTime: null, runId: 'r', token: 'r.1' };
      const leaseFile = join(prefix, 'train', `.${train}.cairn-lease`);
      writeFileSync(leaseFile, JSON.stringify(lease));
      // Staleness is judged by the lease file's own age on the store (mtime), not only the holder's clock.
      const tenSecondsAgo = new Date(Date.now() - 10_000);
      utimesSync(leaseFile, tenSecondsAgo, tenSecondsAgo);
      const row = (cfg: string) => {
        writeFileSync(join(proj, 'cairn.config.mjs'), cfg);
        const r = cairn(proj, ['status', '--json', '--prefix', prefix]);
        expect(r.code, r.stderr).toBe(0);
        return JSON.parse(r.stdout).steps.find((s: { name: string }) => s.name === 'train');
      };
      expect(row('export default {};\n').status).toBe('RUNNING');
      expect(row('export default { leases: { heartbeatMs: 1000, staleMs: 5000 } };\n').status).toBe('STALE_LEASE');
      expect(JSON.parse(cairn(proj, ['config', '--json']).stdout).leases).toMatchObject({ heartbeatMs: 1000, staleMs: 5000 });
      // The same setting is checked as the runner checks it.
      writeFileSync(join(proj, 'cairn.config.mjs'), 'export default { leases: { heartbeatMs: 5000, staleMs: 1000 } };\n');
      const bad = cairn(proj, ['status', '--prefix', prefix]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('staleMs');
    } finally {
      rmSync(proj, { recursive: true, force: true });
    }
  });
});

describe('SIGTERM', () => {
  it('cancels the running step like Ctrl-C: CANCELLED recorded, no lease left, exit 130', async () => {
    const prefix = join(dir, 'terminated');
    const run = cairnAsync(dir, ['run', 'pipeline.mjs', '--prefix', prefix], { FX_SLOW_MS: '60000' });
    await waitFor(run.output, (s) => /running\s+train/.test(s), 30_000);
    run.child.kill('SIGTERM');
    const r = await run.done;
    expect(r.code, r.stdout + r.stderr).toBe(130);
    const status = JSON.parse(cairn(dir, ['status', '--prefix', prefix, '--json']).stdout);
    expect(status.steps.find((s: { name: string }) => s.name === 'train')).toMatchObject({ status: 'CANCELLED', leaseHolder: null });
    const leases = readdirSync(join(prefix, 'train')).filter((n) => n.endsWith('.cairn-lease'));
    expect(leases).toEqual([]);
  }, 60_000);
});
