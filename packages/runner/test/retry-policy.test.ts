import { describe, expect, it } from 'vitest';
import { type AttemptEnd, decide, decideAtOnce, type Decision, MAX_PREEMPTION_BACKOFF_MS, preemptionBackoffMs } from '../src/run/retry-policy.js';
import { ATTEMPT_ENDS } from '../src/states.js';

type Row = [end: AttemptEnd, infrastructure: boolean, attempts: number, infraRetries: number, retries: number, infraLimit: number, expected: Decision];

// One row per rule, and its edges.
const table: Row[] = [
  ['succeeded', false, 1, 0, 0, 3, 'succeed'],
  ['succeeded', true, 5, 3, 0, 3, 'succeed'], // a success is a success, however it got there
  ['lease-lost', false, 1, 0, 5, 3, 'abandon'], // never retried: the step is another runner's now
  ['cancelled', false, 1, 0, 5, 3, 'cancel'],
  ['failed', false, 1, 0, 0, 3, 'fail'],
  ['failed', false, 1, 0, 1, 3, 'retry'],
  ['failed', false, 2, 0, 1, 3, 'fail'],
  ['timeout', false, 1, 0, 1, 3, 'retry'],
  ['timeout', false, 2, 0, 1, 3, 'fail'],
  ['lost', false, 1, 0, 0, 3, 'retry-infra'], // a lost job is an infrastructure failure
  ['failed', true, 1, 0, 0, 3, 'retry-infra'],
  ['failed', true, 3, 2, 0, 3, 'retry-infra'],
  ['failed', true, 4, 3, 0, 3, 'fail'], // infrastructure retries spent, no own retries
  ['failed', true, 4, 3, 1, 3, 'retry'], // then the step's own retries
  ['failed', true, 5, 3, 1, 3, 'fail'],
  ['lost', false, 1, 0, 0, 0, 'fail'], // infraRetries: 0 turns them off
  ['failed', false, 3, 2, 1, 3, 'retry'], // infrastructure retries do not count against the step's
];

type PreemptRow = [end: AttemptEnd, attempts: number, infraRetries: number, preemptions: number, retries: number, preemptionLimit: number, expected: Decision];

// Preemptions spend their own budget, never the step's retries nor infraRetries.
const preemptTable: PreemptRow[] = [
  ['preempted', 1, 0, 0, 0, 100, 'retry-preempted'],
  ['preempted', 100, 0, 99, 0, 100, 'retry-preempted'], // the 100th preemption in a row, retries: 0
  ['preempted', 101, 0, 100, 0, 100, 'fail'], // spent, and no retries of its own
  ['preempted', 101, 0, 100, 1, 100, 'retry'], // spent: then the step's own retries
  ['preempted', 1, 0, 0, 0, 0, 'fail'], // preemptionRetries: 0 turns them off
  ['failed', 4, 0, 3, 0, 100, 'fail'], // after 3 preemptions, a real failure still has no retries
  ['failed', 4, 0, 3, 1, 100, 'retry'], // preemptions did not spend the one retry
  ['failed', 5, 1, 3, 0, 100, 'fail'],
  ['timeout', 3, 0, 2, 1, 100, 'retry'],
  ['lost', 3, 0, 2, 0, 100, 'retry-infra'], // lost jobs still spend infraRetries
  ['cancelled', 3, 0, 2, 0, 100, 'cancel'],
  ['lease-lost', 3, 0, 2, 0, 100, 'abandon'],
];

describe('retry policy', () => {
  it.each(preemptTable)('%s at attempt %i with %i infra retries and %i preemptions, retries %i, preemption limit %i → %s', (end, attempts, infraRetries, preemptions, retries, preemptionLimit, expected) => {
    expect(decide({ end, infrastructure: false }, { attempts, infraRetries, preemptions }, { retries, infraRetries: 3, preemptionRetries: preemptionLimit })).toBe(expected);
  });

  it('backs off between preemptions: doubling from the base, capped', () => {
    expect([1, 2, 3, 4].map((n) => preemptionBackoffMs(n, 1000))).toEqual([1000, 2000, 4000, 8000]);
    expect(preemptionBackoffMs(40, 1000)).toBe(MAX_PREEMPTION_BACKOFF_MS);
    expect(preemptionBackoffMs(1, 0)).toBe(0);
  });

  it('the state table says which budget each attempt end spends', () => {
    expect(ATTEMPT_ENDS.preempted.budget).toBe('preemptionRetries');
    expect(ATTEMPT_ENDS.lost.budget).toBe('infraRetries');
    expect(ATTEMPT_ENDS.failed.budget).toBe('retries');
  });

  it('decideAtOnce answers exactly the rows whose decision needs no history, as decide does', () => {
    for (const [end, infrastructure, attempts, infraRetries, retries, infraLimit, expected] of table) {
      const atOnce = decideAtOnce(end);
      if (atOnce !== undefined) expect(atOnce).toBe(expected);
      else expect(['failed', 'timeout', 'lost', 'preempted']).toContain(end);
      expect(decide({ end, infrastructure }, { attempts, infraRetries }, { retries, infraRetries: infraLimit })).toBe(atOnce ?? expected);
    }
  });

  it.each(table)('%s (infrastructure %s) at attempt %i with %i infra retries, retries %i, infra limit %i → %s', (end, infrastructure, attempts, infraRetries, retries, infraLimit, expected) => {
    expect(decide({ end, infrastructure }, { attempts, infraRetries }, { retries, infraRetries: infraLimit })).toBe(expected);
  });
});
