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

interface GitFacts {
  readonly commit: string | null;
  readonly status: string | null;
  readonly branch: string | null;
}

/** How long git facts are reused: lowering item by item must not start three git processes per item. */
const GIT_TTL_MS = 2000;
let gitCache: { cwd: string; at: number; facts: GitFacts } | undefined;

function gitFacts(): GitFacts {
  const cwd = process.cwd();
  const now = Date.now();
  if (gitCache !== undefined && gitCache.cwd === cwd && now - gitCache.at < GIT_TTL_MS) return gitCache.facts;
  const commit = git(['rev-parse', 'HEAD']);
  const facts: GitFacts = {
    commit,
    status: commit === null ? null : git(['status', '--porcelain', '--untracked-files=no']),
    branch: commit === null ? null : git(['rev-parse', '--abbrev-ref', 'HEAD']),
  };
  gitCache = { cwd, at: now, facts };
  return facts;
}

/**
 * Captures where a plan was made: git commit, dirty flag, branch, user, host, argv, time.
 * Best effort: never throws; fields are `null` where unknown. `CAIRN_PROVENANCE=0` skips git.
 * Git facts are reused for 2 s within one working directory.
 */
export function captureProvenance(): Provenance {
  const facts: GitFacts = process.env.CAIRN_PROVENANCE === '0' ? { commit: null, status: null, branch: null } : gitFacts();
  const { commit, status, branch } = facts;
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
