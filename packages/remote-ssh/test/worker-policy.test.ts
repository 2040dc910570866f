import { hasCode } from '@cairn/core';
import { describe, expect, it } from 'vitest';
import { checkWorkerMode, chooseRunsIn, LONG_STEP_SECONDS } from '../src/index.js';

describe('where a step runs on its host', () => {
  it("auto: the worker, except GPU steps and long ones; the step's hint overrides", () => {
    const where = (r: Parameters<typeof chooseRunsIn>[1]) => chooseRunsIn('s', r, 'auto').runsIn;
    expect(where(undefined)).toBe('worker');
    expect(where({ cpu: 2, memoryGb: 8, timeLimit: LONG_STEP_SECONDS - 1 })).toBe('worker');
    expect(where({ gpus: 1 })).toBe('detached');
    expect(where({ gpus: { count: 2, type: 'a100' } })).toBe('detached');
    expect(where({ gpus: 0 })).toBe('worker');
    expect(where({ timeLimit: LONG_STEP_SECONDS })).toBe('detached');
    expect(where({ hints: { sshWorker: false } })).toBe('detached');
    expect(where({ gpus: 1, hints: { sshWorker: true } })).toBe('worker');
    expect(chooseRunsIn('s', { gpus: 1 }, 'auto').why).toBe('asks for GPUs');
  });

  it("always runs every step in the worker and never none, the hint deciding only under 'always'", () => {
    expect(chooseRunsIn('s', { gpus: 4, timeLimit: 86_400 }, 'always').runsIn).toBe('worker');
    expect(chooseRunsIn('s', { hints: { sshWorker: false } }, 'always').runsIn).toBe('detached');
    expect(chooseRunsIn('s', undefined, 'never').runsIn).toBe('detached');
    expect(chooseRunsIn('s', { hints: { sshWorker: true } }, 'never')).toEqual({ runsIn: 'detached', why: "worker: 'never'" });
  });

  it('bad values are typed errors that name the step or option and the fix', () => {
    let err: unknown;
    try {
      chooseRunsIn('train "x"', { hints: { sshWorker: 1 } }, 'auto');
    } catch (e) {
      err = e;
    }
    expect(hasCode(err, 'CAIRN_INVALID_SPEC')).toBe(true);
    expect(err).toMatchObject({ step: 'train "x"', message: 'Step "train "x"": resources.hints.sshWorker must be true (run in the host\'s persistent worker) or false (own detached process), got 1.' });
    expect(checkWorkerMode(undefined)).toBe('auto');
    expect(checkWorkerMode('never')).toBe('never');
    for (const bad of ['Auto', true, 0, null]) expect(() => checkWorkerMode(bad)).toThrow(expect.objectContaining({ code: 'CAIRN_CONFIG' }));
  });
});
