/** The pure parts of the Ray executor: the state table, resources, submission ids, options. */
import { describe, expect, test } from 'vitest';
import { classify, RAY_STATES } from '../src/states.js';
import { entrypointResources, unplaceable } from '../src/resources.js';
import { generation, generationsOf, submissionId } from '../src/submission-id.js';
import { resolveOptions } from '../src/options.js';
import { runtimeEnvOf } from '../src/runtime-env.js';
import { shQuote } from '../src/entrypoint.js';
import type { RayNodeInfo } from '../src/client.js';

describe('the Ray → Cairn state table', () => {
  test.each([
    [{ status: 'PENDING' }, false, { kind: 'queued' }],
    [{ status: 'RUNNING' }, false, { kind: 'running' }],
    [{ status: 'SUCCEEDED', driver_exit_code: 0 }, false, { kind: 'ended', exitCode: 0 }],
    [{ status: 'SUCCEEDED' }, false, { kind: 'ended', exitCode: 0 }],
    [{ status: 'FAILED', error_type: 'JOB_ENTRYPOINT_COMMAND_ERROR', driver_exit_code: 3 }, false, { kind: 'ended', exitCode: 3 }],
    [{ status: 'FAILED', error_type: 'RUNTIME_ENV_SETUP_FAILURE', message: 'no such pip package' }, false, { kind: 'failed', reason: 'RUNTIME_ENV_SETUP_FAILURE', message: 'no such pip package' }],
    [{ status: 'FAILED', error_type: 'JOB_ENTRYPOINT_COMMAND_START_ERROR', message: 'm' }, false, { kind: 'failed', reason: 'JOB_ENTRYPOINT_COMMAND_START_ERROR', message: 'm' }],
    [{ status: 'FAILED', error_type: 'JOB_SUPERVISOR_ACTOR_DIED', message: 'node died' }, false, { kind: 'infrastructure', reason: 'JOB_SUPERVISOR_ACTOR_DIED', message: 'node died' }],
    [{ status: 'FAILED', error_type: 'SOMETHING_NEW', message: '' }, false, { kind: 'infrastructure', reason: 'SOMETHING_NEW', message: '' }],
    [{ status: 'STOPPED' }, true, { kind: 'stopped', reason: 'CANCELLED' }],
    [{ status: 'STOPPED' }, false, { kind: 'stopped', reason: 'STOPPED' }],
    [{ status: 'NEW_STATE' }, false, { kind: 'running' }],
  ] as const)('%j (cancel requested: %s) → %j', (info, cancelled, verdict) => {
    expect(classify(info as never, cancelled)).toEqual(verdict);
  });

  test('covers every state of Ray 2.60', () => {
    expect(Object.keys(RAY_STATES).sort()).toEqual(['FAILED', 'PENDING', 'RUNNING', 'STOPPED', 'SUCCEEDED']);
  });
});

describe('resources', () => {
  test('map to the entrypoint fields', () => {
    expect(entrypointResources({}, {})).toEqual({ entrypoint_num_cpus: 1 });
    expect(entrypointResources({ cpu: 2, memoryGb: 1.5, gpus: { count: 2, type: 'A100' } }, { resources: { TPU: 4 } })).toEqual({
      entrypoint_num_cpus: 2,
      entrypoint_num_gpus: 2,
      entrypoint_memory: 1.5 * 1024 ** 3,
      entrypoint_resources: { TPU: 4, 'accelerator_type:A100': 0.001 },
    });
  });

  test('that no node can hold are refused with what each node offers', () => {
    const nodes: RayNodeInfo[] = [{ state: 'ALIVE', resources_total: { CPU: 2, memory: 8 * 1024 ** 3 } }, { state: 'ALIVE', resources_total: { CPU: 2, GPU: 2, memory: 8 * 1024 ** 3 } }];
    expect(unplaceable({ entrypoint_num_cpus: 1, entrypoint_num_gpus: 2 }, nodes, 's', 'http://h:8265')).toBeNull();
    const err = unplaceable({ entrypoint_num_cpus: 1, entrypoint_num_gpus: 4 }, nodes, 's', 'http://h:8265');
    expect(err?.message).toContain('asks Ray for 4 GPU (the largest node has 2 GPU)');
    expect(err?.message).toContain('[2 CPU, 8.0 GiB memory] [2 CPU, 2 GPU, 8.0 GiB memory]');
    expect(unplaceable({ entrypoint_resources: { TPU: 1 } }, nodes, 's', 'x')?.message).toContain('1 TPU (the largest node has 0 TPU)');
  });
});

describe('submission ids', () => {
  test('come from the job key, with generations for later runs of the same attempt', () => {
    const base = submissionId('cairn', 'train-0123abcd.2');
    expect(base).toBe('cairn-train-0123abcd.2');
    expect(submissionId('cairn', 'a b/c')).toBe('cairn-a_b_c');
    expect(generation(base, 1)).toBe(base);
    expect(generation(base, 3)).toBe(`${base}~3`);
    expect(generationsOf(base, [base, `${base}~3`, `${base}~2`, `${base}0`, 'other', `${base}~x`])).toEqual([
      { id: `${base}~3`, n: 3 },
      { id: `${base}~2`, n: 2 },
      { id: base, n: 1 },
    ]);
  });
});

describe('options', () => {
  test('read the address and token from the environment, options first', () => {
    expect(resolveOptions({}, { RAY_API_SERVER_ADDRESS: 'http://head:8265/', RAY_AUTH_TOKEN: 't' })).toMatchObject({ address: 'http://head:8265', headers: { authorization: 'Bearer t' } });
    expect(resolveOptions({ address: 'https://a', headers: { 'x-proxy': '1' } }, { RAY_ADDRESS: 'http://b:8265' })).toMatchObject({ address: 'https://a', headers: { 'x-proxy': '1' } });
    expect(resolveOptions({}, { RAY_ADDRESS: 'http://b:8265' }).address).toBe('http://b:8265');
  });

  test('refuse a missing or non-HTTP address, and bad numbers, saying what to give', () => {
    expect(() => resolveOptions({}, {})).toThrow(/no dashboard address.*RAY_API_SERVER_ADDRESS/);
    expect(() => resolveOptions({}, { RAY_ADDRESS: 'head:6379' })).toThrow(/no dashboard address/);
    expect(() => resolveOptions({ address: 'head:6379' }, {})).toThrow(/not an http\(s\) URL.*GCS address/);
    expect(() => resolveOptions({ address: 'http://h', pollIntervalMs: 0 }, {})).toThrow(/pollIntervalMs/);
  });

  test('merge the step runtime environment over the executor one, in Ray names', () => {
    expect(runtimeEnvOf({}, undefined)).toBeUndefined();
    expect(runtimeEnvOf({ workingDir: '/w', envVars: { A: '1', B: '1' }, pip: ['numpy'] }, { envVars: { B: '2' }, pip: ['pandas==2.2'] })).toEqual({ working_dir: '/w', env_vars: { A: '1', B: '2' }, pip: ['pandas==2.2'] });
  });

  test("refuse Ray's built-in resources among a step's custom ones, naming the Cairn resource to use", async () => {
    const { checkHints } = await import('../src/options.js');
    expect(() => checkHints({ resources: { GPU: 1 } }, 's')).toThrow(/resources\.hints\.ray\.resources\.GPU .* resources\.gpus/);
    expect(() => checkHints({ resourcs: {} }, 's')).toThrow(/did you mean "resources"/);
    expect(checkHints({ resources: { TPU: 4 } }, 's')).toEqual({ resources: { TPU: 4 } });
  });

  test('shell quoting survives quotes', () => {
    expect(shQuote("it's")).toBe(`'it'\\''s'`);
  });
});

describe('entrypoints', () => {
  test('a worker step on a cluster without a shared filesystem, with a filesystem store, is refused, saying what to use', async () => {
    const { jobFor, tempRoot } = await import('../../../tools/testenv/grid-jobs.js');
    const { buildEntrypoint } = await import('../src/entrypoint.js');
    const job = jobFor(tempRoot('cairn-ray-unit-'), 'ok');
    await expect(buildEntrypoint(job, { nodePath: 'node', workerEntry: undefined, sharedFs: false, storeCredentials: 'node', nodeTempDir: '/tmp' })).rejects.toThrow(/sharedFs: false.*this step's store is on a filesystem\. Use an s3:\/\/ prefix, or share the store's directory with the Ray nodes and set sharedFs: true/);
  });
});
