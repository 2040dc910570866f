import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkHostKey, hostLookupName, parseKnownHosts, shQuote, shScript } from '../src/index.js';
import { createHmac } from 'node:crypto';

const HOSTILE = [`it's`, '$(touch PWNED)', '`touch PWNED`', 'a\nb', ' lead and trail ', `'"'"'`, '\\', '$HOME', '*', '-n', '', 'a;b|c&d', '!!', '~'];

describe('shQuote', () => {
  it('round-trips hostile strings through a real sh unchanged', () => {
    for (const s of HOSTILE) {
      const out = execFileSync('sh', ['-c', `printf '%s' ${shQuote(s)}`]).toString('utf8');
      expect(out).toBe(s);
    }
  });

  it('round-trips arbitrary strings (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }).filter((s) => !s.includes('\0')), (s) => {
        const out = execFileSync('sh', ['-c', `printf '%s' ${shQuote(s)}`]).toString('utf8');
        expect(out).toBe(s);
      }),
      { numRuns: 150 },
    );
  });

  it('passes script arguments as data', () => {
    const out = execFileSync('sh', ['-c', shScript('for a in "$@"; do printf "[%s]" "$a"; done', HOSTILE)]).toString('utf8');
    expect(out).toBe(HOSTILE.map((s) => `[${s}]`).join(''));
  });

  it('refuses NUL', () => {
    expect(() => shQuote('a\0b')).toThrow(/NUL/);
  });
});

describe('known_hosts', () => {
  const key = Buffer.from('\0\0\0\x0bssh-ed25519\0\0\0\x20' + 'k'.repeat(32), 'latin1');
  const other = Buffer.from('\0\0\0\x0bssh-ed25519\0\0\0\x20' + 'o'.repeat(32), 'latin1');
  const b64 = key.toString('base64');

  it('matches plain, [host]:port, comma lists, wildcards and hashed names', () => {
    const salt = Buffer.from('saltsaltsaltsaltsalt');
    const hashed = `|1|${salt.toString('base64')}|${createHmac('sha1', salt).update('[gpu7]:2222').digest('base64')}`;
    const entries = parseKnownHosts(`# comment\n\nalpha,beta ssh-ed25519 ${b64}\n[127.0.0.1]:2200 ssh-ed25519 ${b64}\n*.lab,!bad.lab ssh-ed25519 ${b64}\n${hashed} ssh-ed25519 ${b64}\n`);
    expect(checkHostKey(entries, 'beta', 22, key)).toEqual({ ok: true });
    expect(checkHostKey(entries, '127.0.0.1', 2200, key)).toEqual({ ok: true });
    expect(checkHostKey(entries, '127.0.0.1', 22, key)).toEqual({ ok: false, problem: 'unknown' });
    expect(checkHostKey(entries, 'node1.lab', 22, key)).toEqual({ ok: true });
    expect(checkHostKey(entries, 'bad.lab', 22, key)).toEqual({ ok: false, problem: 'unknown' });
    expect(checkHostKey(entries, 'gpu7', 2222, key)).toEqual({ ok: true });
    expect(checkHostKey(entries, 'alpha', 22, other)).toEqual({ ok: false, problem: 'changed' });
    expect(hostLookupName('h', 22)).toBe('h');
  });

  it('refuses revoked keys and ignores cert-authority lines', () => {
    const entries = parseKnownHosts(`@revoked * ssh-ed25519 ${b64}\n@cert-authority * ssh-ed25519 ${other.toString('base64')}\nh ssh-ed25519 ${b64}\n`);
    expect(checkHostKey(entries, 'h', 22, key)).toEqual({ ok: false, problem: 'revoked' });
    expect(checkHostKey(entries, 'h', 22, other)).toEqual({ ok: false, problem: 'changed' });
  });
});
