/**
 * A login user whose sessions have no `node` on PATH, and the Python helper installed for it:
 * the host a command step must run on without Node or the bundle. Its login shell sets PATH to
 * a directory of links to every program in /usr/bin but Node's (on this image node lives in
 * /usr/bin beside sh and python3, so PATH cannot simply leave a directory out).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runAs, type LocalUser } from '../../../tools/testenv/sshd.js';

/** The user with no Node on PATH. */
export const NO_NODE_USER = 'cairn-ssh-nonode';

const ROOT = '/usr/local/lib/cairn-test-no-node';
const NODE_TOOLS = new Set(['node', 'nodejs', 'npm', 'npx', 'corepack']);

/** Creates (or updates) {@link NO_NODE_USER} with a login shell whose PATH has no node. Needs root. */
export function ensureNoNodeUser(): void {
  const bin = join(ROOT, 'bin');
  mkdirSync(bin, { recursive: true });
  chmodSync(ROOT, 0o755);
  chmodSync(bin, 0o755);
  for (const name of readdirSync('/usr/bin')) {
    if (NODE_TOOLS.has(name) || existsSync(join(bin, name))) continue;
    symlinkSync(join('/usr/bin', name), join(bin, name));
  }
  const shell = join(ROOT, 'shell');
  writeFileSync(shell, `#!/bin/sh\nPATH=${bin}\nexport PATH\nexec /bin/sh "$@"\n`, { mode: 0o755 });
  chmodSync(shell, 0o755);
  try {
    execFileSync('id', ['-u', NO_NODE_USER], { stdio: 'pipe' });
    execFileSync('usermod', ['-s', shell, NO_NODE_USER], { stdio: 'pipe' });
  } catch {
    execFileSync('useradd', ['-M', '-s', shell, '-p', '*', NO_NODE_USER], { stdio: 'pipe' });
  }
}

/** Installs python/cairn_step into the user's site-packages (what `pip install --user ./python` does). */
export function installPythonHelper(account: LocalUser): void {
  const site = runAs(account, '/usr/bin/python3 -m site --user-site').trim();
  const from = fileURLToPath(new URL('../../../python/cairn_step', import.meta.url));
  runAs(account, 'mkdir -p "$1"', [site]);
  cpSync(from, join(site, 'cairn_step'), { recursive: true });
  execFileSync('chown', ['-R', `${account.uid}:${account.gid}`, join(site, 'cairn_step')]);
}
