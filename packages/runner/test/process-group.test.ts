/**
 * A program's process group (command/process-group.ts), with real processes: whether anything of
 * the group outlived its leader is reported, because a usage meter that knows the group is empty
 * skips its last process-table scan (usage/sampler.ts).
 */
import { describe, expect, it } from 'vitest';
import { startGroup } from '../src/command/process-group.js';

const run = (script: string) => startGroup({ program: 'sh', args: ['-c', script], cwd: process.cwd(), env: process.env, stdio: 'ignore' });

describe('process groups', () => {
  it('a program that started nothing leaves an empty group', async () => {
    const g = await run('exit 3');
    expect(await g.exited).toEqual({ code: 3, signal: null, leftovers: false });
  });

  it('a child left running in the group is reported', async () => {
    const g = await run('sleep 30 & echo started');
    expect(await g.exited).toEqual({ code: 0, signal: null, leftovers: true });
  });
});
