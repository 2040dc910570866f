import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importCircles } from '../../../tools/testenv/import-circles.js';

const src = fileURLToPath(new URL('../src', import.meta.url));

describe('remote-ssh imports', () => {
  it('form no circle, types included: the modules share the Fleet, Job and HostState types through model.ts', () => {
    expect(importCircles(src, { types: true })).toEqual([]);
  });
});
