/**
 * A command step's environment (`command({ environment })`), lowered: a Python venv or a conda
 * prefix to activate, a wrapper command to start the program under, and the lock files that pin
 * what the environment holds. Identity: the venv's and conda prefix's paths and the wrapper are
 * locations and launch details, never hashed (the same environment at another path, or on
 * another host, builds the same outputs); the lock files are hashed by content, exactly like
 * declared sources (they are added to `sources`), so `pip install -r requirements.lock` after
 * an edit rebuilds the step.
 */
import { isAbsolute, resolve } from 'node:path';
import type { CommandEnvironmentTemplate } from './command-types.js';
import { CairnError } from './errors.js';
import { describeValue } from './known-keys.js';

/** `command({ environment })`: where the program's environment comes from. */
export interface CommandEnvironment {
  /**
   * A Python virtual environment's directory (`python3 -m venv .venv`), absolute or relative to
   * the step's `dir`, as the host that runs the step sees it. Activated as `source bin/activate`
   * does: its `bin/` first on `PATH` (so `program: 'python3'` is the venv's), `VIRTUAL_ENV` set,
   * `PYTHONHOME` unset. Never hashed: declare `lock` to hash what is installed in it.
   */
  readonly venv?: string;
  /**
   * A conda environment's prefix directory (`conda env list` shows it), absolute or relative to
   * `dir`: its `bin/` first on `PATH`, `CONDA_PREFIX` and `CONDA_DEFAULT_ENV` set, `PYTHONHOME`
   * unset (its `activate.d` scripts are not run; wrap with `['conda', 'run', '-p', prefix]` when
   * they matter). Not with `venv`. Never hashed.
   */
  readonly conda?: string;
  /**
   * Words the program's command line starts with: `['srun', '--gpus=1']`, `['torchrun',
   * '--nproc-per-node=4']`, `['apptainer', 'exec', 'image.sif']`. The first word is looked up on
   * `PATH` (after the venv's `bin/`). Never hashed: declare an image or config it names in `lock`
   * when its content must rebuild the step. @default []
   */
  readonly wrap?: readonly string[];
  /**
   * Files that pin the environment's content (`requirements.lock`, `environment.yml`,
   * `poetry.lock`), relative to `dir`: hashed by content into the step's identity like `sources`
   * (and checked, staged and refused the same way). @default []
   */
  readonly lock?: string | readonly string[];
}

const ENVIRONMENT_KEYS: ReadonlySet<string> = new Set(['venv', 'conda', 'wrap', 'lock']);

/** The environment as it goes into the template (unhashed), and its lock files (to hash as sources). */
export interface LoweredEnvironment {
  /** The template's `environment`; undefined when the step sets none. */
  readonly template: CommandEnvironmentTemplate | undefined;
  /** Lock files, relative to `dir` as given. */
  readonly lock: readonly string[];
}

/** Checks and lowers `environment` (`CAIRN_INVALID_SPEC` naming the step and the fix). */
export function lowerEnvironment(step: string, dir: string, environment: unknown): LoweredEnvironment {
  if (environment === undefined) return { template: undefined, lock: [] };
  const fail = (what: string): never => {
    throw new CairnError('CAIRN_INVALID_SPEC', `Step "${step}": environment ${what}.`, { step });
  };
  if (typeof environment !== 'object' || environment === null || Array.isArray(environment)) {
    fail(`must be an object such as { venv: '.venv' }, { conda: '/opt/conda/envs/train' } or { wrap: ['srun', '--gpus=1'] }, got ${describeValue(environment)}`);
  }
  const e = environment as Record<string, unknown>;
  for (const k of Object.keys(e)) if (!ENVIRONMENT_KEYS.has(k)) fail(`has an unknown key "${k}"; use venv, conda, wrap or lock`);
  const out: { venv?: string; conda?: string; wrap?: string[] } = {};
  const path = (key: 'venv' | 'conda'): void => {
    const v = e[key];
    if (v === undefined) return;
    if (typeof v !== 'string' || v.length === 0 || v.includes('\0')) fail(`.${key} must be a directory path, got ${describeValue(v)}`);
    out[key] = isAbsolute(v as string) ? (v as string) : resolve(dir, v as string);
  };
  path('venv');
  path('conda');
  if (out.venv !== undefined && out.conda !== undefined) fail('sets both venv and conda; a step activates one of them');
  if (e.wrap !== undefined) {
    const w = e.wrap;
    if (!Array.isArray(w) || w.length === 0 || !w.every((x) => typeof x === 'string' && x.length > 0 && !x.includes('\0'))) {
      fail(`.wrap must be a non-empty list of words such as ['srun', '--gpus=1'], got ${describeValue(w)}`);
    }
    out.wrap = [...(w as string[])];
  }
  const lock = e.lock === undefined ? [] : typeof e.lock === 'string' ? [e.lock] : e.lock;
  if (!Array.isArray(lock)) fail(`.lock must be a file path or a list of them such as 'requirements.lock', got ${describeValue(e.lock)}`);
  const template = Object.keys(out).length === 0 ? undefined : Object.freeze(out);
  return { template, lock: lock as string[] };
}
