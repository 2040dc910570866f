/**
 * A command step's environment (`command({ environment })`) on the local executors, with a real
 * venv the test makes (`python3 -m venv --without-pip`, no network): the venv's Python runs the
 * program and finds a module only the venv holds; a conda prefix's bin/ comes first; a `wrap`
 * prefix starts the program; what is and is not part of identity; a missing venv is named.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { command, describeDrift, lower, OUT, type CairnError } from '@cairn/core';
import { run, StepRunError } from '../src/index.js';

const project = mkdtempSync(join(tmpdir(), 'cairn-command-env-'));
afterAll(() => rmSync(project, { recursive: true, force: true }));

const venv = join(project, '.venv');
execFileSync('python3', ['-m', 'venv', '--without-pip', venv]);
// A module only the venv has: importing it proves the venv's Python (and site-packages) ran the program.
const lib = join(venv, 'lib');
const site = join(lib, readdirSync(lib).find((d) => d.startsWith('python')) as string, 'site-packages');
writeFileSync(join(site, 'only_in_venv.py'), 'WHERE = "venv"\n');
writeFileSync(
  join(project, 'probe.py'),
  `import json, os, sys
import only_in_venv
os.makedirs(sys.argv[1], exist_ok=True)
out = {"prefix": sys.prefix, "where": only_in_venv.WHERE, "virtual_env": os.environ.get("VIRTUAL_ENV"),
       "pythonhome": os.environ.get("PYTHONHOME"), "wrapped": os.environ.get("WRAPPED")}
json.dump({"result": out}, open(os.environ["CAIRN_RESULT"], "w"))
`,
);
// A wrapper as `srun` or `apptainer exec` would be (this machine runs no containers): marks the environment, then runs the rest.
writeFileSync(join(project, 'wrap.sh'), '#!/bin/sh\nWRAPPED="by wrap.sh $1" ; export WRAPPED\nshift\nexec "$@"\n', { mode: 0o755 });
writeFileSync(join(project, 'requirements.lock'), 'numpy==2.1.0\n');
const conda = join(project, 'conda-env');
mkdirSync(join(conda, 'bin'), { recursive: true });
writeFileSync(join(conda, 'bin', 'condaprobe'), '#!/bin/sh\nmkdir -p "$1"\nprintf \'{"result": "%s %s"}\' "$CONDA_PREFIX" "$CONDA_DEFAULT_ENV" > "$CAIRN_RESULT"\n', { mode: 0o755 });

let n = 0;
const fresh = () => join(project, `store-${++n}`);

const probe = (extra: Partial<Parameters<typeof command>[0]> = {}) =>
  command({ name: 'probe', version: 'v1', program: 'python3', args: ['probe.py', OUT], sources: ['probe.py'], dir: project, environment: { venv: '.venv' }, ...extra });

describe.each(['inline', 'threads', 'process'] as const)('a command step in a venv on %s', (executor) => {
  it("runs the venv's python3, which imports what only the venv has", async () => {
    const [loaded] = await run(probe(), { prefix: fresh(), defaultExecutor: executor });
    expect(loaded.value).toMatchObject({ prefix: venv, where: 'venv', virtual_env: venv, pythonhome: null });
  }, 60_000);
});

describe('command step environments', () => {
  it('unsets PYTHONHOME, which would point the venv python elsewhere', async () => {
    const saved = process.env.PYTHONHOME;
    process.env.PYTHONHOME = join(project, 'no-such-python-home');
    try {
      const [loaded] = await run(probe(), { prefix: fresh() });
      expect(loaded.value).toMatchObject({ where: 'venv', pythonhome: null });
    } finally {
      if (saved === undefined) delete process.env.PYTHONHOME;
      else process.env.PYTHONHOME = saved;
    }
  }, 60_000);

  it('a wrap prefix starts the program (inside the venv)', async () => {
    const [loaded] = await run(probe({ environment: { venv: '.venv', wrap: ['./wrap.sh', '--gpus=1'] } }), { prefix: fresh() });
    expect(loaded.value).toMatchObject({ where: 'venv', wrapped: 'by wrap.sh --gpus=1' });
  }, 60_000);

  it("a conda prefix's bin/ comes first on PATH, CONDA_PREFIX and CONDA_DEFAULT_ENV set", async () => {
    const step = command({ name: 'conda', version: 'v1', program: 'condaprobe', args: [OUT], dir: project, environment: { conda: 'conda-env' } });
    const [loaded] = await run(step, { prefix: fresh() });
    expect(loaded.value).toBe(`${conda} conda-env`);
  }, 60_000);

  it("identity: the venv's path and the wrapper are not hashed; a lock file is, by content", () => {
    const [plain] = lower([probe({ environment: undefined })]);
    const [inVenv] = lower([probe()]);
    const [elsewhere] = lower([probe({ environment: { venv: venv, wrap: ['srun'] } })]);
    expect(inVenv!.nameWithHash).toBe(plain!.nameWithHash);
    expect(elsewhere!.nameWithHash).toBe(plain!.nameWithHash);
    const [locked] = lower([probe({ environment: { venv: '.venv', lock: 'requirements.lock' } })]);
    expect(locked!.nameWithHash).not.toBe(plain!.nameWithHash);
    writeFileSync(join(project, 'requirements.lock'), 'numpy==2.2.0\n');
    const [relocked] = lower([probe({ environment: { venv: '.venv', lock: 'requirements.lock' } })]);
    expect(relocked!.nameWithHash).not.toBe(locked!.nameWithHash);
    expect(describeDrift(locked!.fingerprintPayload!, relocked!.fingerprintPayload!)).toEqual(['requirements.lock changed']);
  });

  it('bad environments are typed errors naming the step and the fix, before anything runs', () => {
    const code = (f: () => unknown) => {
      try {
        f();
      } catch (err) {
        return [(err as CairnError).code, (err as Error).message];
      }
      return ['no error'];
    };
    expect(code(() => probe({ environment: { venv: 'no-such-venv' } }))).toEqual(['CAIRN_COMMAND_NOT_FOUND', expect.stringMatching(/Step "probe": its venv .*no-such-venv has no bin\/ directory; create it \(python3 -m venv/)]);
    expect(code(() => probe({ environment: { venv: '.venv', conda: 'conda-env' } }))).toEqual(['CAIRN_INVALID_SPEC', expect.stringContaining('sets both venv and conda')]);
    expect(code(() => probe({ environment: { wrap: [] } }))).toEqual(['CAIRN_INVALID_SPEC', expect.stringContaining("wrap must be a non-empty list of words such as ['srun', '--gpus=1']")]);
    expect(code(() => probe({ environment: { venv: '.venv', lock: 'missing.lock' } }))).toEqual(['CAIRN_COMMAND_SOURCE', expect.stringContaining('missing.lock')]);
    expect(code(() => probe({ environment: { venv: '.venv', lock: '../outside.lock' } }))).toEqual(['CAIRN_COMMAND_SOURCE', expect.stringContaining('outside the project directory')]);
    expect(code(() => probe({ environment: { image: 'x.sif' } as never }))).toEqual(['CAIRN_INVALID_SPEC', expect.stringContaining('unknown key "image"; use venv, conda, wrap or lock')]);
  });

  it('a venv removed after the step was declared fails it with CAIRN_COMMAND_NOT_FOUND, not with the system python', async () => {
    const gone = join(project, 'gone-venv');
    execFileSync('python3', ['-m', 'venv', '--without-pip', gone]);
    const step = probe({ name: 'gone', environment: { venv: gone } });
    rmSync(gone, { recursive: true, force: true });
    const err = await run(step, { prefix: fresh() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StepRunError);
    const failure = (err as StepRunError).failures[0]?.error as CairnError;
    expect(failure.code).toBe('CAIRN_COMMAND_NOT_FOUND');
    expect(failure.message).toContain(`its venv ${gone} has no bin/ directory here`);
  }, 60_000);
});
