/**
 * `@cairn/native`'s spawn (command/native-spawn.ts) with real processes: what the program gets
 * (arguments, working directory, exactly the environment given, its output on the descriptors
 * given, stdin from /dev/null, its own session and process group), how it ended (code, signal),
 * and the errors Node's spawn gives (`ENOENT`, `EACCES`, a missing working directory), compared
 * with Node's own. Skipped without a native build (CAIRN_NATIVE=0, or not Linux).
 */
import { spawn } from 'node:child_process';
import { chmodSync, closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { nativeSpawn, spawnNative, type NativeLaunch } from '../src/command/native-spawn.js';

const dir = mkdtempSync(join(tmpdir(), 'cairn-native-spawn-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Ended = { code: number | null; signal: NodeJS.Signals | null };

/** Runs `launch` (output to a fresh file); how it ended and what it wrote. */
async function run(launch: Omit<NativeLaunch, 'stdout' | 'stderr'>): Promise<Ended & { out: string; pid: number }> {
  const path = join(dir, `out-${Math.random()}`);
  const fd = openSync(path, 'w');
  let ended!: (e: Ended) => void;
  const exit = new Promise<Ended>((resolve) => (ended = resolve));
  let pid: number | undefined;
  try {
    pid = spawnNative({ ...launch, stdout: fd, stderr: fd }, (code, signal) => ended({ code, signal }));
  } finally {
    closeSync(fd);
  }
  if (pid === undefined) throw new Error('not started natively');
  return { ...(await exit), out: readFileSync(path, 'utf8'), pid };
}

/** The error Node's spawn gives for `program` in `cwd`. */
function nodeError(program: string, cwd: string): Promise<NodeJS.ErrnoException> {
  return new Promise((resolve) => spawn(program, ['a'], { cwd, stdio: 'ignore', detached: true }).once('error', resolve));
}

function nativeError(program: string, cwd: string): NodeJS.ErrnoException {
  try {
    spawnNative({ program, args: ['a'], cwd, env: process.env, stdout: 1, stderr: 2 }, () => undefined);
  } catch (err) {
    return err as NodeJS.ErrnoException;
  }
  throw new Error(`${program} started`);
}

const sh = (script: string, env: NodeJS.ProcessEnv = { PATH: process.env.PATH }) => ({ program: 'sh', args: ['-c', script, 'sh', 'one two', ''], cwd: dir, env });

describe.runIf(nativeSpawn)('native spawn', () => {
  it('runs the program with its arguments, cwd, exactly its environment, and stdin from /dev/null', async () => {
    const r = await run(sh('printf "%s|%s|%s|%s|" "$1" "$2" "$(pwd)" "$FOO"; cat', { PATH: process.env.PATH, FOO: 'b a r' }));
    expect(r).toMatchObject({ code: 0, signal: null, out: `one two||${dir}|b a r|` });
    const env = await run({ program: 'env', args: [], cwd: dir, env: { PATH: process.env.PATH, FOO: 'b a r', GONE: undefined, EMPTY: '' } });
    expect(env.out).toBe(`PATH=${process.env.PATH}\nFOO=b a r\nEMPTY=\n`);
  });

  it('looks the program up on the PATH of its environment, and runs a path relative to cwd', async () => {
    writeFileSync(join(dir, 'hello'), '#!/bin/sh\necho hello "$@"\n');
    chmodSync(join(dir, 'hello'), 0o755);
    expect((await run({ program: 'hello', args: ['x'], cwd: '/', env: { PATH: `/nonexistent:${dir}` } })).out).toBe('hello x\n');
    expect((await run({ program: './hello', args: [], cwd: dir, env: {} })).out).toBe('hello\n');
  });

  it('reports the exit code, or the signal that ended it', async () => {
    expect(await run(sh('exit 7'))).toMatchObject({ code: 7, signal: null });
    expect(await run(sh('kill -TERM $$'))).toMatchObject({ code: null, signal: 'SIGTERM' });
  });

  it('starts it as the leader of its own session and process group: a signal to the group reaches its grandchildren', async () => {
    const r = await run(sh('cut -d" " -f5,6 /proc/$$/stat'));
    expect(r.out.trim()).toBe(`${r.pid} ${r.pid}`);
    // A grandchild in the group, killed with it through -pgid.
    const pidFile = join(dir, 'grandchild');
    const fd = openSync('/dev/null', 'w');
    let ended!: (e: Ended) => void;
    const exit = new Promise<Ended>((resolve) => (ended = resolve));
    const pid = spawnNative({ ...sh(`sleep 300 & echo $! > ${pidFile}; wait`), stdout: fd, stderr: fd }, (code, signal) => ended({ code, signal })) as number;
    closeSync(fd);
    while (readFileSyncOrEmpty(pidFile) === '') await new Promise((r) => setTimeout(r, 10));
    const grandchild = Number(readFileSync(pidFile, 'utf8'));
    process.kill(-pid, 'SIGKILL');
    expect(await exit).toEqual({ code: null, signal: 'SIGKILL' });
    await waitGone(grandchild);
    expect(alive(grandchild)).toBe(false);
  });

  it('gives the errors Node gives: ENOENT (not found, no cwd) and EACCES (not executable)', async () => {
    writeFileSync(join(dir, 'plain'), 'not a program');
    for (const [program, cwd] of [['no-such-program-anywhere', dir], [join(dir, 'plain'), dir], ['true', join(dir, 'missing')]] as const) {
      const [mine, node] = [nativeError(program, cwd), await nodeError(program, cwd)];
      expect({ code: mine.code, errno: mine.errno, message: mine.message, syscall: mine.syscall, path: mine.path }).toEqual({ code: node.code, errno: node.errno, message: node.message, syscall: node.syscall, path: node.path });
    }
    expect(nativeError(join(dir, 'plain'), dir).code).toBe('EACCES');
  });

  it('leaves a NUL byte to Node (which rejects it with its own error)', () => {
    expect(spawnNative({ program: 'true', args: ['a\0b'], cwd: dir, env: {}, stdout: 1, stderr: 2 }, () => undefined)).toBeUndefined();
    expect(spawnNative({ program: 'true', args: [], cwd: dir, env: { A: 'x\0y' }, stdout: 1, stderr: 2 }, () => undefined)).toBeUndefined();
  });
});

function readFileSyncOrEmpty(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** Running: a zombie waiting for init to reap it is not. */
function alive(pid: number): boolean {
  const stat = readFileSyncOrEmpty(`/proc/${pid}/stat`);
  return stat !== '' && stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
}

/** Waits until `pid` has stopped running (a killed process takes a moment). */
async function waitGone(pid: number): Promise<void> {
  for (let i = 0; i < 500 && alive(pid); i++) await new Promise((r) => setTimeout(r, 10));
}
