/** Runs the BUILT `cairn` binary on fixture pipelines copied into temp directories. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
export const PACKAGE_DIR = join(here, '..', '..');
export const REPO_DIR = join(PACKAGE_DIR, '..', '..');
export const BIN = join(PACKAGE_DIR, 'dist', 'bin.js');
export const FIXTURES = join(here, '..', 'fixtures');

/** Throws a clear error when a package the tests need is not built. */
export function assertBuilt(): void {
  const missing = [BIN, join(REPO_DIR, 'packages/core/dist/index.js'), join(REPO_DIR, 'packages/runner/dist/index.js'), join(REPO_DIR, 'packages/runner/dist/worker-entry.js')].filter(
    (f) => !existsSync(f),
  );
  if (missing.length > 0) throw new Error(`Build first (npx tsup in packages/core, packages/runner, packages/cli); missing: ${missing.join(', ')}`);
}

/** What else a temp project has. */
export interface ProjectOptions {
  /** Workspace packages linked under node_modules/@cairn. @default ['core', 'runner'] */
  readonly packages?: readonly string[];
  /** A package.json to write (e.g. what `npm init -y` writes). */
  readonly packageJson?: Record<string, unknown>;
}

/** A temp project: fixture files, and node_modules/@cairn/{core,runner} linked to the workspace packages. */
export function makeProject(files: readonly string[], options: ProjectOptions = {}): { dir: string; prefix: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-cli-'));
  mkdirSync(join(dir, 'node_modules', '@cairn'), { recursive: true });
  for (const pkg of options.packages ?? ['core', 'runner']) symlinkSync(join(REPO_DIR, 'packages', pkg), join(dir, 'node_modules', '@cairn', pkg), 'dir');
  if (options.packageJson) writeFileSync(join(dir, 'package.json'), `${JSON.stringify(options.packageJson, null, 2)}\n`);
  for (const f of files) copyFileSync(join(FIXTURES, f), join(dir, f));
  return { dir, prefix: join(dir, 'store'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The outcome of one CLI call. */
export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Environment for the child: no colours, no inherited Cairn settings. */
export function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', ...extra };
  for (const k of ['CAIRN_PREFIX', 'CAIRN_MAX_CONCURRENT', 'CAIRN_EXECUTOR', 'CAIRN_FORCE_RUN_FAILED', 'CAIRN_CONFIG', 'FORCE_COLOR', 'NODE_OPTIONS']) {
    if (!(k in extra)) delete env[k];
  }
  return env;
}

/** Runs `node dist/bin.js …args` in `cwd` and waits for it. */
export function cairn(cwd: string, args: readonly string[], env: Record<string, string> = {}): CliResult {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, env: cliEnv(env), encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Starts `node dist/bin.js …args` without waiting; collects its output. */
export function cairnAsync(cwd: string, args: readonly string[], env: Record<string, string> = {}): { child: ChildProcess; output: () => string; done: Promise<CliResult> } {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<CliResult>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return { child, output: () => stdout + stderr, done };
}

/** Resolves once `predicate(output)` holds; rejects after `ms`. */
export async function waitFor(get: () => string, predicate: (s: string) => boolean, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (!predicate(get())) {
    if (Date.now() > until) throw new Error(`timed out waiting; output so far:\n${get()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Chromium's path, or undefined. */
export function findChromium(): string | undefined {
  for (const p of ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome']) if (existsSync(p)) return p;
  return undefined;
}

/** Screenshots a local HTML file with headless Chromium; returns the PNG path. */
export function screenshot(chromium: string, html: string, workDir: string, size = '1200,800'): string {
  const png = join(workDir, `${Date.now()}-${Math.random().toString(36).slice(2)}.png`);
  const profile = mkdtempSync(join(workDir, 'chromium-'));
  const r = spawnSync(
    chromium,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      `--user-data-dir=${profile}`,
      `--screenshot=${png}`,
      `--window-size=${size}`,
      '--hide-scrollbars',
      '--virtual-time-budget=3000',
      `file://${html}`,
    ],
    { encoding: 'utf8', timeout: 60_000 },
  );
  if (!existsSync(png)) throw new Error(`chromium wrote no screenshot (exit ${r.status}): ${r.stderr.slice(-2000)}`);
  return png;
}
