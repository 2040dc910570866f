/**
 * A new user's first minutes: clone the repository, run the README's first command, then every
 * `npx cairn …` command the README shows, verbatim, in order, and check what each prints.
 * The clone is of this repository's HEAD (commit first to test a change).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, sh, show, type Ran } from './helpers/sh.js';

/** The commands of every ```sh block of a Markdown file, comments and blank lines dropped. */
export function shellCommands(markdown: string): string[] {
  const commands: string[] = [];
  for (const block of markdown.matchAll(/^```(?:sh|bash|shell)\n([\s\S]*?)^```/gm)) {
    for (const line of block[1]!.split('\n')) {
      const command = line.replace(/\s+#.*$/, '').trim();
      if (command && !command.startsWith('#')) commands.push(command);
    }
  }
  return commands;
}

/** What each README command must print (beyond exiting 0), by subcommand. */
const EXPECTED: Record<string, (r: Ran, cwd: string) => void> = {
  run: (r) => expect(r.stdout + r.stderr, show(r)).toMatch(/\d+ succeeded|cached/),
  plan: (r) => expect(r.stdout, show(r)).toMatch(/step\(s\):.*cached/),
  status: (r) => expect(r.stdout, show(r)).toMatch(/SUCCESS/),
  logs: (r) => expect(r.stdout, show(r)).toMatch(/\S/),
  explain: (r) => expect(r.stdout, show(r)).toMatch(/cached/),
  graph: (r, cwd) => {
    const out = /--out (\S+)/.exec(r.command)?.[1];
    expect(out && readFileSync(join(cwd, out), 'utf8'), show(r)).toMatch(/<html[\s>]/i);
  },
  report: (r, cwd) => {
    const out = /--out (\S+)/.exec(r.command)?.[1];
    expect(out && readFileSync(join(cwd, out), 'utf8'), show(r)).toMatch(/<html[\s>]/i);
  },
};

// A command npx cannot find locally must fail, never download and run some registry package.
const env = { npm_config_yes: 'false' };

describe('the README on a fresh clone', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-fresh-clone-'));
  const clone = join(dir, 'cairn');
  let commands: string[] = [];
  let setup: Ran;
  beforeAll(() => {
    const r = sh(`git clone --quiet --no-hardlinks ${JSON.stringify(repoRoot)} ${JSON.stringify(clone)}`, dir);
    if (r.status !== 0) throw new Error(show(r));
    commands = shellCommands(readFileSync(join(clone, 'README.md'), 'utf8'));
    // Nx keeps its cache outside the workspace (~/.nx): skip it, so the clone really builds.
    setup = sh(commands[0]!, clone, { ...env, NX_SKIP_NX_CACHE: 'true' }, 900_000);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('gives exactly two set-up commands, the example and the tests', () => {
    expect(commands.slice(0, 2)).toEqual(['bash scripts/example.sh', 'bash scripts/test.sh']);
    expect(readFileSync(join(repoRoot, '.ci', 'run'), 'utf8')).toMatch(/^bash scripts\/test\.sh$/m);
  });

  it('the first command installs, builds and runs the example', () => {
    expect(setup.status, show(setup)).toBe(0);
    expect(setup.stdout, show(setup)).toMatch(/everything cached/);
  });

  it('npm ci on Node 20 warns about no engine and no unapproved install script', () => {
    expect(setup.stderr, show(setup)).not.toMatch(/EBADENGINE/);
    expect(setup.stderr, show(setup)).not.toMatch(/install scripts not yet covered/);
  });

  it('links the cairn bin into node_modules/.bin (npx finds it, not a registry package)', () => {
    expect(existsSync(join(clone, 'node_modules', '.bin', 'cairn'))).toBe(true);
  });

  it('every `npx cairn` command in the README works as written', () => {
    const cli = commands.filter((c) => c.startsWith('npx cairn '));
    expect(cli.length).toBeGreaterThanOrEqual(7);
    for (const command of cli) {
      const r = sh(command, clone, env, 120_000);
      expect(r.status, show(r)).toBe(0);
      expect(r.stderr, show(r)).not.toMatch(/could not determine executable|npm error/);
      EXPECTED[command.split(/\s+/)[2]!]?.(r, clone);
    }
  });
});

describe('this repository after its own set-up (scripts/test.sh in CI)', () => {
  it('npx cairn resolves to the workspace CLI', () => {
    const r = sh('npx cairn --help', repoRoot, env);
    expect(r.status, show(r)).toBe(0);
    expect(r.stdout).toMatch(/^Usage: cairn /m);
  });
});
