import { execFileSync } from 'node:child_process';
import { hostname, userInfo } from 'node:os';
import type { Provenance } from './types.js';

function git(args: string[]): string | null {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 2000 }).trim();
  } catch {
    return null;
  }
}

/**
 * Captures where a plan was made: git commit, dirty flag, branch, user, host, argv, time.
 * Best effort: never throws; fields are `null` where unknown. `CAIRN_PROVENANCE=0` skips git.
 */
export function captureProvenance(): Provenance {
  const skipGit = process.env.CAIRN_PROVENANCE === '0';
  const commit = skipGit ? null : git(['rev-parse', 'HEAD']);
  const status = commit === null ? null : git(['status', '--porcelain', '--untracked-files=no']);
  const branch = commit === null ? null : git(['rev-parse', '--abbrev-ref', 'HEAD']);
  let user: string | null = null;
  try {
    user = userInfo().username;
  } catch {
    user = process.env.USER ?? null;
  }
  let host: string | null = null;
  try {
    host = hostname();
  } catch {
    host = null;
  }
  return Object.freeze({
    gitCommit: commit,
    dirty: status === null ? null : status.length > 0,
    branch,
    user,
    host,
    argv: Object.freeze([...process.argv]),
    createdAt: new Date().toISOString(),
  });
}
