/**
 * Command steps run real programs (python3, sleep) on the local executors: the helper's
 * round trip, exit codes, signals and the stderr tail, cancellation of the whole process tree,
 * CUDA_VISIBLE_DEVICES, and output streamed to the logs without the runner holding it.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ATTEMPT, command, hasCode, input, lower, makeTask, OUT, type CairnError } from '@cairn/core';
import { run, StepRunError, StepRunner } from '../src/index.js';
import { runTask } from '../src/worker/run-task.js';

const HELPER = fileURLToPath(new URL('../../../python', import.meta.url));
const project = mkdtempSync(join(tmpdir(), 'cairn-command-'));
afterAll(() => rmSync(project, { recursive: true, force: true }));

const script = (name: string, text: string) => writeFileSync(join(project, name), text);
script(
  'echo_ctx.py',
  `import os, sys
from cairn_step import context, report
c = context()
os.makedirs(c.output_path, exist_ok=True)
with open(os.path.join(c.output_path, "argv.txt"), "w") as f:
    f.write(" ".join(sys.argv[1:]))
print("hello from", c.step)
report({"step": c.step, "attempt": c.attempt, "inputs": c.inputs, "runtime": c.runtime, "argv": sys.argv[1:],
        "cuda": os.environ.get("CUDA_VISIBLE_DEVICES"), "seed": os.environ.get("SEED"), "cwd": os.getcwd()},
       metadata={"rows": 3})
`,
);
script('fail.py', `import sys\nfor i in range(40):\n    print("noise line", i, file=sys.stderr)\nprint("ValueError: the vocabulary is empty", file=sys.stderr)\nsys.exit(3)\n`);
script('killed.py', `import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n`);
script(
  'spawner.py',
  `import os, subprocess, sys, time
child = subprocess.Popen(["sleep", "300"])
with open(sys.argv[1], "w") as f:
    f.write(str(child.pid))
time.sleep(300)
`,
);
script(
  'stubborn.py',
  `import os, signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen(["sleep", "300"])
with open(sys.argv[1], "w") as f:
    f.write("%d %d" % (os.getpid(), child.pid))
while True:
    time.sleep(1)
`,
);
script('loud.py', `import sys\nchunk = b"x" * (1 << 20)\nfor _ in range(int(sys.argv[1])):\n    sys.stdout.buffer.write(chunk)\n`);

const env = { PYTHONPATH: HELPER, SEED: '7' };
let n = 0;
const fresh = () => join(project, `store-${++n}`);
const EXECUTORS = ['inline', 'threads', 'process'] as const;

function stepError(err: unknown): CairnError {
  expect(err).toBeInstanceOf(StepRunError);
  return (err as StepRunError).failures[0]?.error as CairnError;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe.each(EXECUTORS)('command steps on %s', (executor) => {
  it('hands the program its context and returns the result it reports', async () => {
    const data = command({ name: 'data', version: 'v1', program: 'python3', args: ['-c', 'import os, sys; os.makedirs(sys.argv[1], exist_ok=True)', OUT], dir: project });
    const step = command({
      name: 'echo',
      version: 'v1',
      program: 'python3',
      args: ['echo_ctx.py', '--in', input('corpus'), '--vocab', input('vocab'), '--out', OUT],
      inputs: { corpus: data, vocab: 32000, note: { any: ['json'] } },
      sources: ['echo_ctx.py'],
      env,
      runtime: { threads: 4 },
      dir: project,
    });
    const prefix = fresh();
    const [loaded] = await run(step, { prefix, defaultExecutor: executor });
    const value = loaded.value as Record<string, unknown>;
    const [dataLoaded] = await run(data, { prefix, defaultExecutor: executor });
    expect(value).toMatchObject({ step: 'echo', attempt: 1, runtime: { threads: 4 }, seed: '7', cuda: null, cwd: project });
    expect(value.inputs).toEqual({ corpus: dataLoaded.path, vocab: 32000, note: { any: ['json'] } });
    // OUT is the attempt's output directory (committed to loaded.path when the step succeeds).
    const argv = value.argv as string[];
    expect(argv.slice(0, 5)).toEqual(['--in', dataLoaded.path, '--vocab', '32000', '--out']);
    expect(readFileSync(join(loaded.path, 'argv.txt'), 'utf8')).toMatch(new RegExp(`^--in ${dataLoaded.path} --vocab 32000 --out ${join(prefix, 'echo')}/`));
    // Its stdout and the metadata line are in the attempt's logs.
    const logs = readdirSync(join(prefix), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('stdout.log') || f.endsWith('.out') || f.includes('stdout'));
    const text = logs.map((f) => readFileSync(join(prefix, f), 'utf8')).join('');
    expect(text).toContain('hello from echo');
    expect(text).toContain('metadata {"rows":3}');
    // Cached: a second run does not start the program.
    const [again] = await run(step, { prefix, defaultExecutor: executor });
    expect(again.value).toEqual(value);
  }, 60_000);

  it('fails with the exit code and the last lines of stderr', async () => {
    const step = command({ name: 'fail', version: 'v1', program: 'python3', args: ['fail.py'], sources: ['fail.py'], dir: project });
    const err = stepError(await run(step, { prefix: fresh(), defaultExecutor: executor, logger: quiet }).catch((e: unknown) => e));
    expect(hasCode(err, 'CAIRN_COMMAND_FAILED')).toBe(true);
    expect(err.message).toContain('python3 exited with code 3');
    expect(err.message).toContain('ValueError: the vocabulary is empty');
    expect(err.message).toContain('noise line 39');
    expect(err.message).not.toContain('noise line 5\n');
  }, 60_000);

  it('fails naming the signal that killed the program', async () => {
    const step = command({ name: 'killed', version: 'v1', program: 'python3', args: ['killed.py'], dir: project });
    const err = stepError(await run(step, { prefix: fresh(), defaultExecutor: executor, logger: quiet }).catch((e: unknown) => e));
    expect(hasCode(err, 'CAIRN_COMMAND_FAILED')).toBe(true);
    expect(err.message).toContain('was killed by SIGKILL');
  }, 60_000);

  it('cancel stops the whole process tree, grandchildren too, within the grace period', async () => {
    const pidFile = join(project, `sleep-${executor}.pid`);
    const step = command({ name: 'spawner', version: 'v1', program: 'python3', args: ['spawner.py', pidFile], dir: project, killGraceMs: 500 });
    const controller = new AbortController();
    const running = run(step, { prefix: fresh(), defaultExecutor: executor, signal: controller.signal, logger: quiet }).catch((e: unknown) => e);
    while (!existsSync(pidFile) || readFileSync(pidFile, 'utf8') === '') await sleep(50);
    const sleepPid = Number(readFileSync(pidFile, 'utf8'));
    expect(alive(sleepPid)).toBe(true);
    controller.abort();
    const err = await running;
    expect(hasCode(err, 'CAIRN_CANCELLED')).toBe(true);
    // Generous for a loaded machine: the grace is 500 ms.
    for (let i = 0; i < 100 && alive(sleepPid); i++) await sleep(50);
    expect(alive(sleepPid)).toBe(false);
  }, 60_000);

  it('a program that ignores SIGTERM is killed with its children after the grace period', async () => {
    const pidFile = join(project, `stubborn-${executor}.pid`);
    const step = command({ name: 'stubborn', version: 'v1', program: 'python3', args: ['stubborn.py', pidFile], dir: project, killGraceMs: 300 });
    const controller = new AbortController();
    const running = run(step, { prefix: fresh(), defaultExecutor: executor, signal: controller.signal, logger: quiet }).catch((e: unknown) => e);
    while (!existsSync(pidFile) || readFileSync(pidFile, 'utf8') === '') await sleep(50);
    const [pyPid, sleepPid] = readFileSync(pidFile, 'utf8').split(' ').map(Number) as [number, number];
    controller.abort();
    expect(hasCode(await running, 'CAIRN_CANCELLED')).toBe(true);
    for (let i = 0; i < 100 && (alive(sleepPid) || alive(pyPid)); i++) await sleep(50);
    expect(alive(pyPid)).toBe(false);
    expect(alive(sleepPid)).toBe(false);
  }, 60_000);

  it('a timeout stops the program', async () => {
    const pidFile = join(project, `timeout-${executor}.pid`);
    const step = command({ name: 'slow', version: 'v1', program: 'python3', args: ['spawner.py', pidFile], dir: project, timeoutMs: 6000, killGraceMs: 200 });
    const err = stepError(await run(step, { prefix: fresh(), defaultExecutor: executor, logger: quiet }).catch((e: unknown) => e));
    expect(hasCode(err, 'CAIRN_TIMEOUT')).toBe(true);
    const sleepPid = Number(readFileSync(pidFile, 'utf8'));
    for (let i = 0; i < 100 && alive(sleepPid); i++) await sleep(50);
    expect(alive(sleepPid)).toBe(false);
  }, 60_000);
});

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe('command steps: running them', () => {
  it('plan says which declared source changed since the last build', async () => {
    script('tok.py', 'import os, sys\nos.makedirs(sys.argv[1], exist_ok=True)\n');
    const declare = () => command({ name: 'tok', version: 'v1', program: 'python3', args: ['tok.py', OUT], sources: ['tok.py'], dir: project });
    const prefix = fresh();
    await run(declare(), { prefix });
    expect((await new StepRunner({ prefix }).plan([declare()])).steps[0]?.state).toBe('cached');
    script('tok.py', 'import os, sys\nos.makedirs(sys.argv[1], exist_ok=True)  # edited\n');
    const step = (await new StepRunner({ prefix }).plan([declare()])).steps[0];
    expect(step?.reason).toContain('tok.py changed');
  }, 60_000);

  it('retries a failed program; ATTEMPT tells it which attempt it is', async () => {
    script('flaky.py', 'import sys\nif sys.argv[1] == "1":\n    sys.exit("first attempt fails")\nprint("attempt", sys.argv[1])\n');
    const step = command({ name: 'flaky', version: 'v1', program: 'python3', args: ['flaky.py', ATTEMPT], dir: project, retries: 1 });
    const prefix = fresh();
    const attempts: number[] = [];
    const [loaded] = await run(step, { prefix, logger: quiet, onEvent: (e) => void (e.type === 'step' && e.state === 'running' && attempts.push(e.attempt ?? 0)) });
    expect(loaded.value).toBeUndefined();
    expect(attempts).toEqual([1, 2]);
  }, 60_000);

  it('a source edited after the step was declared is refused (its output would carry the wrong identity)', async () => {
    script('edited.py', 'print(1)\n');
    const step = command({ name: 'edited', version: 'v1', program: 'python3', args: ['edited.py'], sources: ['edited.py'], dir: project });
    script('edited.py', 'print(2)\n');
    const err = stepError(await run(step, { prefix: fresh(), logger: quiet }).catch((e: unknown) => e));
    expect(hasCode(err, 'CAIRN_COMMAND_SOURCE')).toBe(true);
    expect(err.message).toContain('edited.py changed after the pipeline was declared');
  });

  it('a program that disappeared from PATH fails with CAIRN_COMMAND_NOT_FOUND when started', async () => {
    script('gone.sh', '#!/bin/sh\nexit 0\n');
    const { chmodSync, unlinkSync } = await import('node:fs');
    chmodSync(join(project, 'gone.sh'), 0o755);
    const step = command({ name: 'gone', version: 'v1', program: './gone.sh', dir: project });
    unlinkSync(join(project, 'gone.sh'));
    const err = stepError(await run(step, { prefix: fresh(), logger: quiet }).catch((e: unknown) => e));
    expect(hasCode(err, 'CAIRN_COMMAND_NOT_FOUND')).toBe(true);
  });

  it('sets CUDA_VISIBLE_DEVICES to the GPU slots the executor assigned', async () => {
    const step = command({ name: 'gpu', version: 'v1', program: 'python3', args: ['echo_ctx.py'], env, dir: project, resources: { gpus: 2 } });
    const spec = lower(step);
    const out = join(fresh(), 'gpu');
    const task = makeTask(spec, { outputPath: out, depPaths: {}, attempt: 2, resources: { gpus: 2, gpuIndices: [1, 3] } });
    const logs = { stdout: join(out, '..', 'gpu.out'), stderr: join(out, '..', 'gpu.err') };
    const value = (await runTask(task, { signal: new AbortController().signal, log: quiet, logPaths: logs })) as Record<string, unknown>;
    expect(value).toMatchObject({ cuda: '1,3', attempt: 2 });
    expect(readFileSync(logs.stdout, 'utf8')).toContain('hello from gpu');
  });

  it('a program printing 200 MB streams it to the log file without growing the runner', async () => {
    const prefix = fresh();
    const step = command({ name: 'loud', version: 'v1', program: 'python3', args: ['loud.py', '200'], dir: project });
    const before = process.memoryUsage().rss;
    let peak = before;
    const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    try {
      await run(step, { prefix });
    } finally {
      clearInterval(timer);
    }
    peak = Math.max(peak, process.memoryUsage().rss);
    const logs = readdirSync(prefix, { recursive: true, encoding: 'utf8' }).map((f) => join(prefix, f));
    const { statSync } = await import('node:fs');
    const biggest = Math.max(...logs.map((f) => (statSync(f).isFile() ? statSync(f).size : 0)));
    expect(biggest).toBeGreaterThanOrEqual(200 * (1 << 20));
    expect(peak - before).toBeLessThan(64 * (1 << 20));
  }, 60_000);
});
