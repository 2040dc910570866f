import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { CairnError } from '@cairn/core';

/** One parsed `known_hosts` line. */
export interface KnownHostEntry {
  /** `@cert-authority` / `@revoked`, when present. */
  readonly marker: string | undefined;
  /** Host patterns (comma-separated in the file), or one hashed `|1|salt|hash` entry. */
  readonly patterns: readonly string[];
  /** Key type (`ssh-ed25519`, …). */
  readonly keyType: string;
  /** Base64 key blob. */
  readonly key: string;
}

/** Parses OpenSSH `known_hosts` text (comments, markers, hashed names, `[host]:port`). */
export function parseKnownHosts(text: string): KnownHostEntry[] {
  const out: KnownHostEntry[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const fields = line.split(/\s+/);
    let marker: string | undefined;
    if (fields[0]?.startsWith('@')) marker = fields.shift();
    const [hosts, keyType, key] = fields;
    if (!hosts || !keyType || !key) continue;
    out.push({ marker, patterns: hosts.split(','), keyType, key });
  }
  return out;
}

/** The name OpenSSH looks up: `host`, or `[host]:port` when the port is not 22. */
export function hostLookupName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

function globToRegExp(pattern: string): RegExp {
  const body = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replaceAll('*', '.*').replaceAll('?', '.');
  return new RegExp(`^${body}$`, 'i');
}

function patternMatches(pattern: string, name: string): boolean {
  if (pattern.startsWith('|1|')) {
    const [, , salt, hash] = pattern.split('|');
    if (!salt || !hash) return false;
    return createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest('base64') === hash;
  }
  return globToRegExp(pattern).test(name);
}

/** True when the entry's host patterns match `name` (a negated pattern `!p` that matches excludes it). */
export function entryMatches(entry: KnownHostEntry, name: string): boolean {
  let matched = false;
  for (const p of entry.patterns) {
    if (p.startsWith('!')) {
      if (patternMatches(p.slice(1), name)) return false;
    } else if (patternMatches(p, name)) matched = true;
  }
  return matched;
}

/** Outcome of checking a presented host key. */
export type HostKeyCheck =
  /** A matching line has this exact key. */
  | { readonly ok: true }
  /** No line for this host, a different key (possible man-in-the-middle), or a revoked key. */
  | { readonly ok: false; readonly problem: 'unknown' | 'changed' | 'revoked' };

/** Checks `keyBlob` (SSH wire format, as the server presented it) for `host:port` against parsed entries. */
export function checkHostKey(entries: readonly KnownHostEntry[], host: string, port: number, keyBlob: Buffer): HostKeyCheck {
  const name = hostLookupName(host, port);
  const presented = keyBlob.toString('base64');
  let sawHost = false;
  for (const e of entries) {
    if (e.marker === '@revoked' && e.key === presented) return { ok: false, problem: 'revoked' };
  }
  for (const e of entries) {
    if (e.marker !== undefined || !entryMatches(e, name)) continue;
    sawHost = true;
    if (e.key === presented) return { ok: true };
  }
  return { ok: false, problem: sawHost ? 'changed' : 'unknown' };
}

/** The key type named inside an SSH wire-format key blob. */
export function keyTypeOf(keyBlob: Buffer): string {
  if (keyBlob.length < 4) return 'unknown';
  const len = keyBlob.readUInt32BE(0);
  return keyBlob.subarray(4, 4 + len).toString('latin1');
}

/** The error for a refused host key; the message says what to do. */
export function hostKeyError(hostName: string, host: string, port: number, knownHostsPath: string, keyBlob: Buffer, problem: 'unknown' | 'changed' | 'revoked'): CairnError {
  const line = `${hostLookupName(host, port)} ${keyTypeOf(keyBlob)} ${keyBlob.toString('base64')}`;
  const what =
    problem === 'unknown'
      ? `its host key is not in ${knownHostsPath}. If you trust this host, add the line\n  ${line}\n(or run \`ssh-keyscan -p ${port} ${host} >> ${knownHostsPath}\` and check the fingerprint)`
      : problem === 'changed'
        ? `its host key differs from the one in ${knownHostsPath}: someone may be intercepting the connection, or the host was reinstalled. Check with the host's admin, then replace its line (\`ssh-keygen -R '${hostLookupName(host, port)}' -f ${knownHostsPath}\`)`
        : `its host key is marked @revoked in ${knownHostsPath}`;
  return new CairnError('CAIRN_REMOTE', `SSH host "${hostName}" (${host}:${port}) refused: ${what}.`);
}

/** Reads and parses a known_hosts file; a missing file reads as empty. */
export function loadKnownHosts(path: string): KnownHostEntry[] {
  try {
    return parseKnownHosts(readFileSync(path, 'utf8'));
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new CairnError('CAIRN_CONFIG', `Cannot read known_hosts file ${path}: ${(cause as Error).message}.`, { cause });
  }
}
