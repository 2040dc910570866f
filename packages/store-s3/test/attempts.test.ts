/**
 * The pure rules behind one-attempt outputs and safe downloads: attempt prefixes, what a record
 * names, and which object keys may become local files.
 */
import { describe, expect, it } from 'vitest';
import { attemptOf, attemptPrefix, objectsOf } from '../src/attempts.js';
import { isMetadata, localFileOf } from '../src/inputs.js';

describe('attempt prefixes and the record that names one', () => {
  it.each([
    ['mc4x-0a1b2c3d', '@mc4x-0a1b2c3d/'],
    ['run/with spaces', '@run_with_spaces/'],
  ])('attemptPrefix(%j) = %j', (runId, prefix) => expect(attemptPrefix(runId)).toBe(prefix));

  it.each([
    ['@r1/model.bin', '@r1/'],
    ['@r1/a/b', '@r1/'],
    ['@r1', undefined],
    ['model.bin', undefined],
    ['.cairn/logs/attempt-1.stdout', undefined],
  ])('attemptOf(%j) = %j', (rel, prefix) => expect(attemptOf(rel)).toBe(prefix));

  it.each([
    ['{"objects":"@r1/"}', '@r1/'],
    ['{"name":"old layout"}', null],
    ['{"objects":"../../x/"}', null], // never a prefix outside the step directory
    ['{"objects":"@a/b/"}', null],
    ['not json', undefined],
    [null, undefined],
  ])('objectsOf(%j) = %j', (text, prefix) => expect(objectsOf(text)).toBe(prefix));

  it.each([
    ['.executor_status', true],
    ['.artifact.json', true],
    ['.executor_status.lock', true],
    ['.cairn/job.json', true],
    ['@r1/model.bin', true],
    ['model.bin', false],
    ['shards/a.txt', false],
  ])('isMetadata(%j) = %j (never downloaded as an output of the old layout)', (rel, meta) => expect(isMetadata(rel)).toBe(meta));
});

describe('object keys that become local files', () => {
  it.each(['model.bin', 'shards/b/c.json', '..a', 'a..', '.hidden'])('%j stays inside', (rel) => {
    expect(localFileOf('/cache/x', rel, 'b', `dep/${rel}`)).toBe(`/cache/x/${rel}`);
  });

  it.each(['../x', '../../../../etc/target', 'a/../../x', 'a/./b', 'a//b', '/abs', 'a/', 'a/..', 'nul\0byte'])('%j is refused with CAIRN_INVALID_PATH naming the key', (rel) => {
    let err: unknown;
    try {
      localFileOf('/cache/x', rel, 'b', `dep/${rel}`);
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'CAIRN_INVALID_PATH', message: expect.stringContaining(JSON.stringify(`dep/${rel}`)) });
  });
});
