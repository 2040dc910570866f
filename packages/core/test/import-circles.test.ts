import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importCircles } from '../../../tools/testenv/import-circles.js';

const src = fileURLToPath(new URL('../src', import.meta.url));

describe('core imports', () => {
  it('form no circle at run time (hooks travel with the lowered graph; OUT, the handle brand and spec internals are leaf modules)', () => {
    expect(importCircles(src)).toEqual([]);
  });

  it('the check finds a circle when there is one', () => {
    // Types alone still loop (types.ts and handle.ts name each other): proof the walk sees circles.
    expect(importCircles(src, { types: true }).length).toBeGreaterThan(0);
  });
});
