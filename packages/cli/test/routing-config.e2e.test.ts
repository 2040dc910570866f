/**
 * Routing from `cairn.config.*` through the BUILT binary: `remoteExecutor` sends the steps that
 * declare resources (and name no executor) to that executor, the rest to the default; a name
 * that is neither a built-in nor a configured executor is `CAIRN_EXECUTOR` naming the known
 * ones, before anything runs.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cairn, makeProject } from './helpers/cli.js';

let project: ReturnType<typeof makeProject> | undefined;

function projectWith(config: string): { dir: string; prefix: string } {
  project = makeProject(['routing.mjs']);
  writeFileSync(join(project.dir, 'cairn.config.mjs'), `export default ${config};\n`);
  return project;
}

beforeAll(() => assertBuilt());
afterEach(() => {
  project?.cleanup();
  project = undefined;
});

describe('remoteExecutor in the config', () => {
  it('sends the step that declares resources to it, the others to the default executor', () => {
    const { dir, prefix } = projectWith(`{ executors: { gpubox: { use: 'process' } }, remoteExecutor: 'gpubox', pools: { gpu: 1 } }`);
    const r = cairn(dir, ['run', 'routing.mjs', '--prefix', prefix]);
    expect(r.code, r.stderr).toBe(0);
    const status = cairn(dir, ['status', '--prefix', prefix, '--json']);
    expect(status.code, status.stderr).toBe(0);
    const steps = JSON.parse(status.stdout).steps as { name: string; executor: string }[];
    expect(Object.fromEntries(steps.map((s) => [s.name, s.executor]))).toEqual({ prep: 'inline', fit: 'gpubox' });
    // It really ran elsewhere: a process executor's step has its own pid.
    const fit = JSON.parse(cairn(dir, ['status', 'fit', '--prefix', prefix, '--json']).stdout).record.result;
    const prep = JSON.parse(cairn(dir, ['status', 'prep', '--prefix', prefix, '--json']).stdout).record.result;
    expect(fit.pid).not.toBe(prep.pid);
    const config = cairn(dir, ['config', '--json']);
    expect(JSON.parse(config.stdout).remoteExecutor).toBe('gpubox');
  });

  it('an unknown executor name is CAIRN_EXECUTOR naming the nearest and the known ones; nothing runs', () => {
    const { dir, prefix } = projectWith(`{ executors: { gpubox: { use: 'process' } }, remoteExecutor: 'gpubx' }`);
    const r = cairn(dir, ['run', 'routing.mjs', '--prefix', prefix]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('[CAIRN_EXECUTOR]');
    expect(r.stderr).toContain('did you mean "gpubox"');
    expect(r.stderr).toContain('inline, threads, process, gpubox');
    expect(existsSync(prefix)).toBe(false);
    const config = cairn(dir, ['config']);
    expect(config.code).toBe(2);
    expect(config.stderr).toContain('[CAIRN_EXECUTOR]');
  });

  it('a value that is not a name is CAIRN_CONFIG', () => {
    const { dir, prefix } = projectWith(`{ remoteExecutor: { name: 'gpubox' } }`);
    const r = cairn(dir, ['run', 'routing.mjs', '--prefix', prefix]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/remoteExecutor must be the name of an executor.*\[CAIRN_CONFIG\]/s);
  });
});
