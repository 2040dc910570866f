/**
 * A program's process group (command/process-group.ts), with real processes, started both ways:
 * output to files (through `@cairn/native`'s spawn when it is loaded, native-spawn.ts) and piped
 * (Node's spawn). Whether anything of the group outlived its leader is reported, because a usage
 * meter that knows the group is empty skips its last process-table scan (usage/sampler.ts).
 */
import { closeSync, openSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { type StartOptions, startGroup } from '../src/command/process-group.js';

const devNull = openSync('/dev/null', 'w');
afterAll(() => closeSync(devNull));

const starts: [string, StartOptions['output']][] = [
  ['output to files', { stdout: devNull, stderr: devNull }],
  ['piped output', undefined],
];

describe.each(starts)('process groups, %s', (_, output) => {
  const run = (script: string) => startGroup({ program: 'sh', args: ['-c', script], cwd: process.cwd(), env: process.env, output });

  it('a program that started nothing leaves an empty group', async () => {
    const g = await run('exit 3');
    g.pipes?.stdout.resume();
    g.pipes?.stderr.resume();
    expect(await g.exited).toEqual({ code: 3, signal: null, leftovers: false });
  });

  it('a child left running in the group is reported', async () => {
    const g = await run('sleep 30 & echo started');
    g.pipes?.stdout.resume();
    g.pipes?.stderr.resume();
    expect(await g.exited).toEqual({ code: 0, signal: null, leftovers: true });
  });

  it('pipes only where the output is piped', async () => {
    const g = await run('true');
    expect(g.pipes !== undefined).toBe(output === undefined);
    g.pipes?.stdout.resume();
    g.pipes?.stderr.resume();
    await g.exited;
  });
});
