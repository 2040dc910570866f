/** Provenance (issue 20): every record says where it was made — plain StepSpecs' too, not only lazy steps'. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apply, lower, StepSpec } from '@cairn/core';
import { StepRunner } from '../src/index.js';
import { memoryLogger, tempDirs } from './helpers/graph.js';

const dir = tempDirs();
const recordOf = (spec: StepSpec, prefix: string) => JSON.parse(readFileSync(join(spec.outputPath(prefix), '.artifact.json'), 'utf8'));

describe('provenance on records', () => {
  it('a plain StepSpec records the git commit, dirty flag, user, host, argv and time of its run; one capture per run', async () => {
    const prefix = dir();
    const a = new StepSpec({ name: 'plain-a', fn: () => undefined });
    const b = new StepSpec({ name: 'plain-b', fn: () => undefined, deps: [a] });
    const before = Date.now();
    await new StepRunner({ prefix, logger: memoryLogger() }).run([b]);
    const ra = recordOf(a, prefix);
    const rb = recordOf(b, prefix);
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
    expect(ra.provenance).toMatchObject({ gitCommit: head, user: expect.any(String), host: expect.any(String) });
    expect(typeof ra.provenance.dirty).toBe('boolean');
    expect(ra.provenance.argv).toEqual(process.argv);
    expect(Date.parse(ra.provenance.createdAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(rb.provenance).toEqual(ra.provenance);
  });

  it("a lazy step keeps its lowering's provenance", async () => {
    const prefix = dir();
    const spec = lower(apply({ name: 'lazy', version: 'v1', inputs: {}, fn: () => 1 }));
    await new StepRunner({ prefix, logger: memoryLogger() }).run([spec]);
    expect(recordOf(spec, prefix).provenance).toEqual(JSON.parse(JSON.stringify(spec.provenance)));
  });
});
