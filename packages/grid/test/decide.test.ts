/** The status decision and the packing policy: pure functions, table-tested. */
import { describe, expect, test } from 'vitest';
import { createBatcher } from '../src/batcher.js';
import { decide, packable, packPolicy, planPacks, shapeKey, type Observation, type SchedulerJobInfo, type StateClass } from '../src/index.js';

const o = (p: Partial<Observation>): Observation => ({ begun: false, cancelRequested: false, graceExpired: false, ...p });
const info = (cls: StateClass, reason?: string, exitCode?: number): SchedulerJobInfo => ({ state: reason ?? cls.toUpperCase(), class: cls, reason, exitCode });

describe('decide', () => {
  test.each<[string, Partial<Observation>, object]>([
    ['exit 0 is success whatever the scheduler says', { info: info('running'), exit: { code: 0, signal: null } }, { kind: 'result', code: 0 }],
    ['exit 3 is the step failing', { info: info('failed'), exit: { code: 3, signal: null } }, { kind: 'result', code: 3 }],
    ['a TERM death while the scheduler still runs it: wait for its word', { info: info('running'), exit: { code: 143, signal: null } }, { kind: 'wait' }],
    ['... which is a kill', { info: info('killed', 'TIMEOUT'), exit: { code: 143, signal: null } }, { kind: 'ended', state: 'failed', reason: 'TIMEOUT' }],
    ['the walltime warning is a TIMEOUT', { info: info('running'), exit: { code: 143, signal: 'USR2' } }, { kind: 'ended', state: 'failed', reason: 'TIMEOUT' }],
    ['our cancel', { info: info('killed', 'CANCELLED'), cancelRequested: true }, { kind: 'ended', state: 'cancelled' }],
    ['an outside cancel fails the step', { info: info('killed', 'CANCELLED') }, { kind: 'ended', state: 'failed', reason: 'CANCELLED' }],
    ['node trouble is infrastructure', { info: info('infrastructure', 'NODE_FAIL') }, { kind: 'ended', state: 'lost', reason: 'NODE_FAIL', infrastructure: true }],
    ['an error-held job is lost', { info: info('stuck', 'Eqw') }, { kind: 'ended', state: 'lost', reason: 'Eqw', infrastructure: true }],
    ['a preempted job is preempted, not lost (its own retry budget)', { info: info('preempted', 'PREEMPTED') }, { kind: 'ended', state: 'preempted', reason: 'PREEMPTED' }],
    ['... also when the worker died of the preemption TERM first', { info: info('preempted', 'PREEMPTED'), exit: { code: 143, signal: null } }, { kind: 'ended', state: 'preempted', reason: 'PREEMPTED', exitCode: 143 }],
    ['... or the wrapper recorded the TERM', { info: info('preempted', 'PREEMPTED'), exit: { code: 143, signal: 'TERM' } }, { kind: 'ended', state: 'preempted', reason: 'PREEMPTED' }],
    ['completed without an exit file: wait, then lost', { info: info('completed') }, { kind: 'wait' }],
    ['... after the grace window', { info: info('completed'), graceExpired: true }, { kind: 'ended', state: 'lost', infrastructure: true }],
    ['vanished after our cancel', { cancelRequested: true }, { kind: 'ended', state: 'cancelled' }],
    ['vanished, grace over', { graceExpired: true }, { kind: 'ended', state: 'lost', reason: 'job vanished from the scheduler' }],
    ['unknown states never end a step', { info: info('unknown'), graceExpired: true }, { kind: 'wait' }],
    ['queued', { info: info('queued') }, { kind: 'active', state: 'queued' }],
    ['queued again after it ran: requeued, a preemption', { info: info('queued'), wasRunning: true }, { kind: 'ended', state: 'preempted', reason: 'requeued (QUEUED)' }],
    ['... not once we asked to cancel it', { info: info('queued'), wasRunning: true, cancelRequested: true }, { kind: 'active', state: 'queued' }],
    ['... nor for a packed step (its task may rerun steps already done)', { info: info('queued'), wasRunning: true, packed: true }, { kind: 'active', state: 'queued' }],
  ])('%s', (_name, obs, verdict) => {
    expect(decide(o(obs))).toMatchObject(verdict);
  });

  test.each<[string, Partial<Observation>, object]>([
    ['a packed step waits while its task runs another', { info: info('running'), packed: true }, { kind: 'active', state: 'queued' }],
    ['... and runs once it has begun', { info: info('running'), packed: true, begun: true }, { kind: 'active', state: 'running' }],
    ['a packed step cancelled before it started is cancelled at once', { info: info('running'), packed: true, cancelRequested: true }, { kind: 'ended', state: 'cancelled' }],
    ['the task timed out before the step started: not its fault', { exit: { code: 143, signal: 'USR2', unstarted: true }, packed: true }, { kind: 'ended', state: 'lost', infrastructure: true }],
    ['... nor when the scheduler killed the task', { info: info('killed', 'TIMEOUT'), packed: true }, { kind: 'ended', state: 'lost', infrastructure: true }],
    ['the task was cancelled from outside before the step started', { info: info('killed', 'CANCELLED'), packed: true }, { kind: 'ended', state: 'failed', reason: 'CANCELLED' }],
    ['an unstarted step we cancelled', { exit: { code: 143, signal: 'TERM', unstarted: true }, packed: true, cancelRequested: true }, { kind: 'ended', state: 'cancelled' }],
  ])('packed: %s', (_name, obs, verdict) => {
    expect(decide(o(obs))).toMatchObject(verdict);
  });
});

describe('packing policy', () => {
  const policy = packPolicy({ stepsPerTask: 4, tasksPerArray: 3, maxTaskSeconds: 100, maxStepSeconds: 30 });

  test('a batch is cut into nearly equal tasks, tasks into arrays, every step once and in order', () => {
    const plan = planPacks(Array(10).fill(undefined), policy);
    expect(plan.map((a) => a.map((t) => t.steps))).toEqual([[[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]]);
    const big = planPacks(Array(13).fill(undefined), policy);
    expect(big.map((a) => a.length)).toEqual([3, 1]);
    expect(big.flat().flatMap((t) => t.steps)).toEqual([...Array(13).keys()]);
  });

  test("a task's time limit is the sum of its steps' plus the start allowance, at most maxTaskSeconds", () => {
    expect(planPacks([20, 20, 20, 20, 20], policy).flat()).toEqual([
      { steps: [0, 1], timeLimit: 100 },
      { steps: [2, 3], timeLimit: 100 },
      { steps: [4], timeLimit: 80 },
    ]);
    expect(planPacks([10, 10], policy).flat()).toEqual([{ steps: [0, 1], timeLimit: 80 }]);
    expect(planPacks([undefined, undefined], policy).flat()).toEqual([{ steps: [0, 1], timeLimit: undefined }]);
  });

  test('which steps may share a job', () => {
    expect(packable({}, policy)).toBe(true);
    expect(packable({ timeLimit: 31 }, policy)).toBe(false);
    expect(packable({ hints: { pack: false } }, policy)).toBe(false);
    expect(shapeKey({ cpu: 1, hints: { partition: 'a', pack: true } })).toBe(shapeKey({ cpu: 1, hints: { partition: 'a' } }));
    expect(shapeKey({ cpu: 1, timeLimit: 5 })).toBe(shapeKey({ cpu: 1, timeLimit: 9 }));
    expect(shapeKey({ cpu: 1, timeLimit: 5 })).not.toBe(shapeKey({ cpu: 1 }));
    expect(shapeKey({ cpu: 2 })).not.toBe(shapeKey({ cpu: 1 }));
  });

  test('a batch goes when full or when its first step has waited maxWaitMs', async () => {
    const flushed: number[][] = [];
    const b = createBatcher<number>({ capacity: 3, maxWaitMs: 50, flush: (items) => flushed.push(items) });
    for (const i of [1, 2, 3, 4]) b.add('k', i);
    expect(flushed).toEqual([[1, 2, 3]]);
    expect(b.waiting).toBe(1);
    await new Promise((r) => setTimeout(r, 80));
    expect(flushed).toEqual([[1, 2, 3], [4]]);
    b.add('x', 5);
    expect(b.drain()).toEqual([5]);
  });
});
