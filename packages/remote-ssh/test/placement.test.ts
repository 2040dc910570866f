import { describe, expect, it } from 'vitest';
import { demandOf, HostSlots } from '../src/index.js';

describe('HostSlots', () => {
  it('assigns distinct GPU indices and never oversubscribes', () => {
    const s = new HostSlots({ cpus: 4, memoryGb: 8, gpus: [3, 5, 6] });
    const d = demandOf({ cpu: 1, memoryGb: 2, gpus: 2 });
    expect(s.fits(d)).toBe(true);
    const g1 = s.take(d);
    expect(g1).toEqual([3, 5]);
    expect(s.fits(d)).toBe(false); // one GPU left
    const g2 = s.take(demandOf({ gpus: { count: 1 } }));
    expect(g2).toEqual([6]);
    expect(s.fits(demandOf({ cpu: 3 }))).toBe(false);
    s.release(d, g1);
    expect(s.fits(d)).toBe(true);
    expect(s.canEverFit(demandOf({ gpus: 4 }))).toBe(false);
    expect(s.canEverFit(demandOf({ memoryGb: 9 }))).toBe(false);
  });
});
