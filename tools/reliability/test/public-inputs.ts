/**
 * Generators of the runner's public inputs for the fuzz suite (issue 18): each yields a value
 * and whether it is valid, from a good generator, a bad one (values seen to slip through or
 * crash: prefix '', '~user', sparse arrays, the name '.cairn', pins that leave the prefix,
 * maxConcurrent "4", unknown option keys…) or arbitrary data judged by an oracle written from
 * the documented rules, not from the implementation.
 */
import { posix } from 'node:path';
import fc from 'fast-check';

/** An input and whether the documented rules accept it. */
export interface Case {
  readonly value: unknown;
  readonly valid: boolean;
}

const good = (arb: fc.Arbitrary<unknown>): fc.Arbitrary<Case> => arb.map((value) => ({ value, valid: true }));
const bad = (arb: fc.Arbitrary<unknown>): fc.Arbitrary<Case> => arb.map((value) => ({ value, valid: false }));
const judged = (arb: fc.Arbitrary<unknown>, oracle: (v: unknown) => boolean): fc.Arbitrary<Case> => arb.map((value) => ({ value, valid: oracle(value) }));

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const text = fc.string({ unit: 'binary', maxLength: 12 });
const notString = fc.oneof(fc.integer(), fc.constant(null), fc.boolean(), fc.constant([]), fc.constant({}), fc.bigInt({ min: 0n, max: 9n }), fc.constant(() => 'x'));
const segment = fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,8}$/).filter((s) => !s.includes('..') && s !== '.cairn');

/** A step name or version: one path segment (docs: no '/', '..', '.', '.cairn', scheme, control characters, edge whitespace). */
export function segmentValid(v: unknown): boolean {
  return typeof v === 'string' && v !== '' && v !== '.' && v !== '.cairn' && !v.includes('/') && !v.includes('..') && !CONTROL.test(v) && v.trim() === v && v.isWellFormed();
}
export const names: fc.Arbitrary<Case> = fc.oneof(
  good(segment),
  bad(fc.constantFrom('', '.', '..', '.cairn', 'a/b', 's3://x', ' a', 'a ', 'a\n', 'x\u0085', 'a..b', 'ab\uD800')),
  bad(notString),
  judged(text, segmentValid),
);

/** A pin or overrideOutputPath (docs: relative ones normalised, strictly inside the prefix; absolute paths and URLs kept). */
export function locationValid(v: unknown): boolean {
  if (typeof v !== 'string' || CONTROL.test(v) || !v.isWellFormed()) return false;
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(v) || v.startsWith('/')) return true;
  if (v.trim() === '' || v === '~' || v.startsWith('~/')) return false;
  const rel = posix.normalize(v).replace(/\/+$/, '');
  return rel !== '.' && rel !== '' && rel !== '..' && !rel.startsWith('../') && !rel.split('/').includes('.cairn');
}
export const locations: fc.Arbitrary<Case> = fc.oneof(
  good(fc.array(segment, { minLength: 1, maxLength: 3 }).map((s) => s.join('/'))),
  good(fc.array(segment, { minLength: 1, maxLength: 3 }).map((s) => `./${s.join('//')}/`)),
  good(fc.array(segment, { minLength: 1, maxLength: 2 }).map((s) => `/data/${s.join('/')}`)),
  good(fc.constantFrom('s3://bucket/x', 'gs://b/a/../c', '/', 'a/./b', 'a/b/../c')),
  bad(fc.constantFrom('', '.', './', '..', '../x', 'a/../..', 'a/../../../x', '../../escape-pin', 'x/.cairn', '.cairn/runs', '~/x', '~', 'a\0b', 'a\nb', '  ')),
  bad(notString),
  judged(fc.array(fc.constantFrom('a', '.', '..', '', '.cairn', 'b c', '~'), { maxLength: 5 }).map((p) => p.join('/')), locationValid),
  judged(text, locationValid),
);

/** A store prefix (docs: '' refused, '~' and '~/…' expanded, '~user' refused). */
export function prefixValid(v: unknown): boolean {
  if (typeof v !== 'string' || v.trim() === '' || CONTROL.test(v) || !v.isWellFormed()) return false;
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(v)) return true;
  return !(v.startsWith('~') && v !== '~' && !v.startsWith('~/'));
}
export const prefixes: fc.Arbitrary<Case> = fc.oneof(
  good(fc.constantFrom('/tmp/cairn-fuzz', './.cairn', 'rel/dir', 's3://bucket/cairn', '~', '~/cairn', 'file:///tmp/x')),
  bad(fc.constantFrom('', ' ', '\t', '~bob/x', '~root', 'a\0b', 'x\u0085y')),
  bad(notString),
  judged(text, prefixValid),
);

/** maxConcurrent (docs: a positive integer). */
export const maxConcurrent: fc.Arbitrary<Case> = fc.oneof(
  good(fc.integer({ min: 1, max: 10_000 })),
  bad(fc.constantFrom(0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '4', '8', null, true, 4n, [4], { n: 4 })),
  judged(fc.oneof(fc.double(), fc.integer({ min: -5, max: 5 })), (v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1),
);

/** pools (docs: gpu, memoryGb, cpu: non-negative numbers). */
const poolValue = fc.oneof(good(fc.nat({ max: 64 })), good(fc.double({ min: 0, max: 1e6, noNaN: true })), bad(fc.constantFrom(-1, Number.NaN, '2', null, [])));
export const pools: fc.Arbitrary<Case> = fc.oneof(
  fc.tuple(fc.subarray(['gpu', 'memoryGb', 'cpu']), fc.array(poolValue, { minLength: 3, maxLength: 3 })).map(([keys, values]) => {
    const value: Record<string, unknown> = {};
    let valid = true;
    keys.forEach((k, i) => {
      const c = values[i] as Case;
      value[k] = c.value;
      valid &&= c.valid;
    });
    return { value, valid };
  }),
  bad(fc.constantFrom({ gpus: 2 }, { GPU: 1 }, { memory: 8 }, { cpus: 4 }, { 'executor:ssh': 1 }, [1], 'gpu', 3)),
  judged(fc.dictionary(fc.constantFrom('gpu', 'cpu', 'memoryGb', 'gpus', 'disk'), fc.oneof(fc.nat(), fc.integer({ min: -3, max: -1 })), { maxKeys: 3 }), (v) =>
    Object.entries(v as Record<string, number>).every(([k, n]) => ['gpu', 'memoryGb', 'cpu'].includes(k) && n >= 0),
  ),
);

/** An executor name on a step (docs: a letter, then letters, digits, '.', '_', '-'; at most 64). */
export function executorNameValid(v: unknown): boolean {
  return typeof v === 'string' && /^[A-Za-z][A-Za-z0-9._-]{0,63}$/.test(v);
}
export const executorNames: fc.Arbitrary<Case> = fc.oneof(
  good(fc.constantFrom('inline', 'threads', 'process', 'ssh', 'gpu-box.2', 'my_exec')),
  bad(fc.constantFrom('', ' ssh', 'a/b', '-x', '1st', 'x'.repeat(65), 'has space', 'ssh\n')),
  bad(notString),
  judged(text, executorNameValid),
);

/** Resources (docs: cpu, memoryGb, timeLimit non-negative; gpus a whole count or { count, type }; hints plain data). */
const nonNeg = fc.oneof(good(fc.nat({ max: 128 })), good(fc.double({ min: 0, max: 1e4, noNaN: true })), bad(fc.constantFrom(-1, Number.NaN, Number.POSITIVE_INFINITY, '2', null)));
const gpus = fc.oneof(good(fc.nat({ max: 8 })), good(fc.record({ count: fc.nat({ max: 8 }), type: fc.constantFrom('a100', 'h100') })), bad(fc.constantFrom(1.5, -1, '1', { type: 'a100' }, { count: 1, kind: 'a100' }, { count: 0.5 }, { count: 1, type: '' })));
export const resources: fc.Arbitrary<Case> = fc.oneof(
  fc.record({ cpu: nonNeg, memoryGb: nonNeg, timeLimit: nonNeg, gpus }, { requiredKeys: [] }).map((r) => {
    const value: Record<string, unknown> = {};
    let valid = true;
    for (const [k, c] of Object.entries(r)) {
      value[k] = (c as Case).value;
      valid &&= (c as Case).valid;
    }
    return { value, valid };
  }),
  good(fc.constant({ hints: { partition: 'gpu', sshWorker: true } })),
  bad(fc.constantFrom({ gpu: 1 }, { memGb: 2 }, { cpus: 2 }, { hints: 'gpu' }, { hints: { f: () => 1 } }, { hints: { s: [1, , 3] } }, 'cpu=2', 4, [])),
);

/** An options object with one key added that no version of Cairn knows (a typo or a foreign option). */
export function withUnknownKey(known: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(fc.constantFrom('retires', 'runtime', 'timeout', 'executors2', 'prefx', 'maxConcurrency', 'resource', 'Pin'), fc.stringMatching(/^[a-z][A-Za-z]{0,10}$/)).filter((k) => !known.includes(k) && k !== '__proto__' && k !== 'constructor');
}
