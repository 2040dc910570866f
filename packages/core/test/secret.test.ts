/**
 * `secret('NAME')`: only the name is hashed (two values, one identity; two names, two), the
 * tagged key is reserved, workers get the tagged form, and a command step takes a secret in its
 * env only (never its inputs, which reach a context file on disk, nor its arguments).
 */
import { describe, expect, it } from 'vitest';
import { apply, canonicalize, command, fingerprintPayload, hasCode, lower, secret, secretNames } from '../src/index.js';
import { revealSecrets } from '../src/internal.js';

const fn = (i: { key: string; list?: string[] }) => i.key.length;

describe('secret()', () => {
  it('is hashed by its name only', () => {
    expect(canonicalize({ key: secret('HF_TOKEN') })).toBe('{"key":{"__secret__":"HF_TOKEN"}}');
    const a = lower(apply({ name: 's', version: 'v1', fn, inputs: { key: secret('HF_TOKEN') } }));
    const b = lower(apply({ name: 's', version: 'v1', fn, inputs: { key: secret('HF_TOKEN') } }));
    const c = lower(apply({ name: 's', version: 'v1', fn, inputs: { key: secret('WANDB_API_KEY') } }));
    expect(a.fingerprint).toBe(b.fingerprint);
    expect(a.fingerprint).not.toBe(c.fingerprint);
    expect(fingerprintPayload(apply({ name: 's', version: 'v1', fn, inputs: { key: secret('HF_TOKEN') } }))).toBe('{"key":{"__secret__":"HF_TOKEN"}}');
  });

  it('reaches workers as its tagged form, filled in at the call', () => {
    const spec = lower(apply({ name: 's', version: 'v1', fn, inputs: { key: secret('HF_TOKEN'), list: [secret('HF_TOKEN'), 'x'] } }));
    expect(spec.inputs).toEqual({ key: { __secret__: 'HF_TOKEN' }, list: [{ __secret__: 'HF_TOKEN' }, 'x'] });
    expect(secretNames(spec.inputs)).toEqual(['HF_TOKEN']);
    expect(revealSecrets(spec.inputs, { HF_TOKEN: 'v' }, 's')).toEqual({ key: 'v', list: ['v', 'x'] });
    let err: unknown;
    try {
      revealSecrets(spec.inputs, {}, 's');
    } catch (e) {
      err = e;
    }
    expect(hasCode(err, 'CAIRN_SECRET_UNRESOLVED')).toBe(true);
  });

  it('refuses a bad name and the reserved key in plain inputs', () => {
    expect(() => secret('HF-TOKEN')).toThrow(/environment variable name/);
    expect(() => canonicalize({ __secret__: 'HF_TOKEN' })).toThrow(/reserved/);
  });

  it('goes into a command step through env only', () => {
    const ok = command({ name: 'c', version: 'v1', program: 'sh', args: ['-c', 'true'], env: { HF_TOKEN: secret('HF_TOKEN') } });
    expect(fingerprintPayload(ok)).toContain('"env":{"HF_TOKEN":{"__secret__":"HF_TOKEN"}}');
    expect(() => command({ name: 'c', version: 'v1', program: 'sh', inputs: { token: secret('HF_TOKEN') } })).toThrow(/secret HF_TOKEN is in inputs.*pass it through env instead/);
    expect(() => command({ name: 'c', version: 'v1', program: 'sh', args: [secret('HF_TOKEN') as never] })).toThrow(/args\[0\]/);
  });
});
