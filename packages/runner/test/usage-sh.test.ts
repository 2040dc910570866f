/**
 * The shell functions a wrapper measures a program with where no Node runs (usage/usage-sh.ts),
 * run by real shells: the POSIX `sh` of the host and bash in POSIX mode. Their numbers are made
 * with builtins (no process per conversion), so the conversions are checked here directly: a
 * `times` field with any number of decimals, a leading zero (not octal), and garbage (0, not a
 * shell that exits on a bad arithmetic expression).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { USAGE_SH_FUNCTIONS } from '../src/usage/usage-sh.js';

const dir = mkdtempSync(join(tmpdir(), 'cairn-usage-sh-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'functions.sh'), USAGE_SH_FUNCTIONS);

const shells: [string, string[]][] = [
  ['sh', []],
  ['bash', ['--posix']],
];

describe.each(shells)('usage shell functions under %s', (shell, flags) => {
  const run = (script: string) => execFileSync(shell, [...flags, '-c', `. ${join(dir, 'functions.sh')}\n${script}`], { cwd: dir, encoding: 'utf8' });

  it('turns `times` fields into milliseconds', () => {
    const fields = ['1m2.345s', '0m0.000000s', '0m0.01s', '10m05.5s', '0m0s', '0m08.09s', 'garbage'];
    const out = run(`for f in ${fields.join(' ')}; do cairn_usec "$f"; echo "$cairn_un"; done`);
    expect(out.trim().split('\n').map(Number)).toEqual([62_345, 0, 10, 605_500, 0, 8_090, 0]);
  });

  it("writes usage.json with the CPU time of the program it waited for", () => {
    const work = mkdtempSync(join(dir, 'job-'));
    run(`cd ${work}
cairn_ustart "$PWD/usage.state"
sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done' &
c=$!; cairn_uloop "$c" "$PWD/usage.state" </dev/null >/dev/null 2>&1 & u=$!
wait "$c"; rc=$?; kill "$u" 2>/dev/null
cairn_uwrite "$PWD/usage.json" "$PWD/usage.state" ssh "$rc"`);
    const usage = JSON.parse(readFileSync(join(work, 'usage.json'), 'utf8'));
    expect(usage).toMatchObject({ executor: 'ssh', cpuScope: 'tree', exitCode: 0 });
    expect(usage.cpuMs).toBeGreaterThan(20);
    expect(usage.wallMs).toBeGreaterThanOrEqual(usage.cpuMs - 20);
    // Its scratch files are gone.
    expect(execFileSync('ls', ['-A', work], { encoding: 'utf8' }).trim()).toBe('usage.json');
  });
});
