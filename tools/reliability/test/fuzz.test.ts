/**
 * Fuzzing (fast-check, seeded, bounded runs): canonical encoding, the spec codec, spec
 * validation and remote-ssh's shell quoting. Bad inputs must always give a typed CairnError.
 */
import { execFileSync } from 'node:child_process';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { apply, canonicalize, decodeSpecs, defineStep, encodeSpecs, getBackend, isCairnError, lower, OUT, resolvePrefix, StepSpec } from '@cairn/core';
import { shQuote, shScript } from '@cairn/remote-ssh';
// The runner's option validators, for the rebuilt runner to call (not yet on its public entry).
import { checkRunOptions, checkStepRunnerOptions } from '../../../packages/runner/src/options.js';
import { SEED, SIZES } from './env.js';
import { record } from './metrics.js';
import { executorNames, locations, maxConcurrent, names, pools, prefixes, resources, withUnknownKey, type Case } from './public-inputs.js';

const params = { seed: SEED, numRuns: SIZES.fuzzRuns };
const tally = { badInputs: 0, typedErrors: 0, untyped: [] as string[] };
/** The public inputs (issue 18): every bad one must be a typed CairnError; none may crash or pass. */
const pub = { tried: 0, typed: 0, accepted: 0, crashed: 0, silentlyAccepted: 0, problems: [] as string[] };
afterAll(() =>
  record('fuzz', {
    badInputsTried: tally.badInputs,
    typedErrors: tally.typedErrors,
    untypedErrors: tally.badInputs - tally.typedErrors,
    firstUntyped: tally.untyped[0] ?? '',
    publicTried: pub.tried,
    publicTyped: pub.typed,
    publicAccepted: pub.accepted,
    publicCrashed: pub.crashed,
    publicSilentlyAccepted: pub.silentlyAccepted,
    firstPublicProblem: pub.problems[0] ?? '',
  }),
);

const show = (v: unknown): string => {
  try {
    return typeof v === 'string' ? JSON.stringify(v) : typeof v === 'bigint' ? `${v}n` : typeof v === 'function' ? 'a function' : (JSON.stringify(v) ?? String(v));
  } catch {
    return String(v);
  }
};

/**
 * Feeds one public input through `use`: a valid one must be accepted, an invalid one refused with
 * a CairnError; anything else is counted (crashed: not a CairnError; silently accepted) and fails.
 */
function feed(what: string, c: Case, use: (v: unknown) => unknown): void {
  pub.tried++;
  let err: unknown;
  let threw = false;
  try {
    use(c.value);
  } catch (e) {
    threw = true;
    err = e;
  }
  let outcome: 'accepted' | 'typed' | 'crashed' | 'silently accepted' | 'wrongly refused';
  if (!threw) outcome = c.valid ? 'accepted' : 'silently accepted';
  else if (isCairnError(err) && typeof err.code === 'string' && err.code.startsWith('CAIRN_')) outcome = c.valid ? 'wrongly refused' : 'typed';
  else outcome = 'crashed';
  if (outcome === 'accepted') pub.accepted++;
  else if (outcome === 'typed') pub.typed++;
  else {
    if (outcome === 'crashed') pub.crashed++;
    if (outcome === 'silently accepted') pub.silentlyAccepted++;
    if (pub.problems.length < 5) pub.problems.push(`${what} ${show(c.value)}: ${outcome}${threw ? ` (${String((err as Error)?.message ?? err).slice(0, 120)})` : ''}`);
  }
  expect(outcome, `${what} ${show(c.value)}`).toBe(c.valid ? 'accepted' : 'typed');
}

/** Counts a refused input; true when it was refused with a CairnError of one of `codes`. */
function typed(err: unknown, codes?: readonly string[]): boolean {
  tally.badInputs++;
  const ok = isCairnError(err) && typeof err.code === 'string' && err.code.startsWith('CAIRN_') && (codes === undefined || codes.includes(err.code));
  if (ok) tally.typedErrors++;
  else if (tally.untyped.length < 5) tally.untyped.push(`${(err as Error)?.name}: ${String((err as Error)?.message).slice(0, 160)}`);
  return ok;
}

// Values the canonical encoding accepts. No -0 (encodes as 0 but is not deep-equal to 0), no
// undefined properties (omitted), only Uint8Array bytes (Buffer encodes the same but is another class).
const wellFormed = fc.string({ unit: 'binary', maxLength: 8 }).filter((s) => s.isWellFormed());
const key = fc.oneof(fc.constantFrom('a', 'b', 'c', 'B', 'é', '\u{1F600}', 'z1'), wellFormed).filter((k) => !k.startsWith('__') && k !== '__proto__');
const leaf = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer({ min: -3, max: 3 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => (Object.is(n, -0) ? 0 : n)),
  wellFormed,
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }),
  fc.uint8Array({ maxLength: 6 }),
  fc.date({ noInvalidDate: true }),
);
const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(key, tie('value'), { maxKeys: 4 }),
    fc.array(fc.tuple(fc.oneof(wellFormed, fc.integer({ min: 0, max: 5 })), tie('value')), { maxLength: 3 }).map((e) => new Map(e)),
    fc.array(leaf, { maxLength: 3 }).map((e) => new Set(e)),
  ),
}));

/** A deep copy with object keys, Map entries and Set elements in another (seeded) order. */
function reordered(v: unknown, rand: () => number): unknown {
  const shuffle = <T>(a: T[]): T[] => a.map((x) => [rand(), x] as const).sort((p, q) => p[0] - q[0]).map((p) => p[1]);
  if (Array.isArray(v)) return v.map((x) => reordered(x, rand));
  if (v instanceof Map) return new Map(shuffle([...v].map(([k, x]) => [k, reordered(x, rand)] as [unknown, unknown])));
  if (v instanceof Set) return new Set(shuffle([...v].map((x) => reordered(x, rand))));
  if (v instanceof Date) return new Date(v.getTime());
  if (v instanceof Uint8Array) return Uint8Array.from(v);
  if (v !== null && typeof v === 'object') return Object.fromEntries(shuffle(Object.entries(v).map(([k, x]) => [k, reordered(x, rand)] as [string, unknown])));
  return v;
}

class Opaque {
  x = 1;
}
const refused = fc.constantFrom<[string, () => unknown]>(
  ['function', () => () => 1],
  ['symbol', () => Symbol('s')],
  ['NaN', () => Number.NaN],
  ['Infinity', () => Number.POSITIVE_INFINITY],
  ['-Infinity', () => Number.NEGATIVE_INFINITY],
  ['class instance', () => new Opaque()],
  ['Float32Array', () => new Float32Array(2)],
  ['lone surrogate', () => 'ab\uD800'],
  ['lone surrogate key', () => ({ ['k\uDC00']: 1 })],
  ['invalid Date', () => new Date(Number.NaN)],
  ['reserved key', () => ({ __map__: [] })],
  ['cycle', () => {
    const o: Record<string, unknown> = { a: 1 };
    o.self = { back: o };
    return o;
  }],
);

describe('canonical encoding', () => {
  it('key order (and Map/Set insertion order) never changes the bytes', () => {
    fc.assert(
      fc.property(value, fc.integer(), (v, s) => {
        let x = s >>> 0;
        const rand = () => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0) / 2 ** 32);
        expect(canonicalize(reordered(v, rand))).toBe(canonicalize(v));
      }),
      params,
    );
  });

  it('equal values ⇔ equal bytes', () => {
    fc.assert(
      fc.property(value, value, (a, b) => {
        expect(canonicalize(a) === canonicalize(b)).toBe(isDeepStrictEqual(a, b));
      }),
      params,
    );
  });

  it('a refused value anywhere inside a value always gives CAIRN_CANONICAL_VALUE', () => {
    fc.assert(
      fc.property(fc.array(key, { minLength: 1, maxLength: 3 }), refused, value, (path, [, bad], around) => {
        let inner: unknown = bad();
        for (const k of path) inner = k.length % 2 ? [around, inner] : { [k]: inner };
        let err: unknown;
        try {
          canonicalize(inner);
        } catch (e) {
          err = e;
        }
        expect(typed(err, ['CAIRN_CANONICAL_VALUE'])).toBe(true);
      }),
      params,
    );
  });
});

describe('spec codec (msgpack)', () => {
  const graph = fc
    .array(fc.record({ name: fc.stringMatching(/^[a-z][a-z0-9_-]{0,7}$/), attrs: fc.dictionary(key, leaf, { maxKeys: 3 }), deps: fc.array(fc.nat(), { maxLength: 2 }) }), {
      minLength: 1,
      maxLength: 6,
    })
    .map((rows) => {
      const specs: StepSpec[] = [];
      rows.forEach((r, i) => {
        const deps = i === 0 ? [] : [...new Set(r.deps.map((d) => specs[d % i] as StepSpec))];
        specs.push(new StepSpec({ name: r.name, hashAttrs: r.attrs, deps, ref: { module: 'file:///steps.mjs', export: r.name } }));
      });
      return specs;
    });
  const identities = (specs: readonly StepSpec[]) => specs.map((s) => s.nameWithHash).sort();

  /** Decodes; returns 'corrupt' for CAIRN_CODEC_CORRUPT, the specs otherwise; any other error fails. */
  function decodeOrCorrupt(bytes: Uint8Array): StepSpec[] | 'corrupt' {
    try {
      return decodeSpecs(bytes);
    } catch (err) {
      expect(typed(err, ['CAIRN_CODEC_CORRUPT']), `not CAIRN_CODEC_CORRUPT: ${String(err)}`).toBe(true);
      return 'corrupt';
    }
  }

  it('round-trips whole graphs', () => {
    fc.assert(
      fc.property(graph, (specs) => {
        const back = decodeSpecs(encodeSpecs(specs.slice(-1)));
        expect(back.map((s) => s.nameWithHash)).toContain((specs.at(-1) as StepSpec).nameWithHash);
      }),
      params,
    );
  });

  it('random bytes, truncations and bit flips never crash: CAIRN_CODEC_CORRUPT or a whole graph', () => {
    const resum = (bytes: Uint8Array) => {
      // Re-seal the checksum so the corruption reaches the msgpack decoder and the validation.
      const body = bytes.subarray(6, bytes.length - 8);
      new DataView(bytes.buffer, bytes.byteOffset).setBigUint64(bytes.length - 8, getBackend().xxh64(body), true);
      return bytes;
    };
    fc.assert(
      fc.property(graph, fc.nat(), fc.nat(), fc.integer({ min: 0, max: 3 }), fc.uint8Array({ maxLength: 64 }), (specs, at, bit, mode, noise) => {
        const good = encodeSpecs(specs);
        const whole = identities(decodeSpecs(good));
        let bad: Uint8Array;
        if (mode === 0) bad = good.slice(0, at % good.length); // truncated
        else if (mode === 3) bad = resum(Uint8Array.from([0x43, 0x41, 0x49, 0x52, 0x4e, good[5] as number, ...noise, 0, 0, 0, 0, 0, 0, 0, 0]));
        else {
          bad = good.slice();
          const i = at % bad.length;
          bad[i] = (bad[i] as number) ^ (1 << bit % 8);
          if (mode === 2 && i >= 6 && i < bad.length - 8) resum(bad);
        }
        const out = decodeOrCorrupt(bad);
        if (out !== 'corrupt') {
          // A graph comes back whole: every spec is a StepSpec whose deps are in the graph.
          const ids = new Set(out.map((s) => s.nameWithHash));
          for (const s of out) {
            expect(s).toBeInstanceOf(StepSpec);
            for (const d of s.deps) expect(ids.has(d.nameWithHash) || out.some((o) => o.deps.includes(d))).toBe(true);
          }
          if (mode === 0 || mode === 1) expect(identities(out)).toEqual(whole);
        }
      }),
      params,
    );
  });
});

describe('spec validation', () => {
  const anything = fc.oneof(fc.anything(), leaf, fc.constant(undefined), fc.constant(() => 1), fc.constant(Number.NaN), fc.constant(-1), wellFormed);
  const names = fc.oneof(wellFormed, fc.string({ unit: 'binary' }), fc.constantFrom('', '.', '..', 'a/b', 's3://x', ' a', 'a\n', 'ok', 'x\u0085'), anything);

  it('new StepSpec with random fields is a valid spec or a CairnError with a code, never another exception', () => {
    fc.assert(
      fc.property(names, anything, anything, anything, anything, anything, (name, hashAttrs, retries, timeoutMs, resources, deps) => {
        try {
          const s = new StepSpec({ name, hashAttrs, retries, timeoutMs, resources, deps } as never);
          expect(s.nameWithHash).toMatch(/-[0-9a-f]{16}$/);
        } catch (err) {
          expect(typed(err), `untyped: ${String(err)}`).toBe(true);
        }
      }),
      params,
    );
  });

  it('apply() + lower() with random names, versions and inputs is a spec or a CairnError with a code', () => {
    fc.assert(
      fc.property(names, names, anything, (name, version, input) => {
        try {
          const spec = lower(apply({ name, version, fn: () => 1, inputs: { input, out: OUT } } as never));
          expect(spec).toBeInstanceOf(StepSpec);
        } catch (err) {
          expect(typed(err), `untyped: ${String(err)}`).toBe(true);
        }
      }),
      params,
    );
  });
});

describe('remote command building (shQuote / shScript through a real sh)', () => {
  const arg = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 12 }).filter((s) => s.isWellFormed() && !s.includes('\0')),
    fc.constantFrom("'", "'\\''", '$(touch /tmp/pwned)', '`id`', '"', '\\', '\n', ' ', '*', '~', '-n', '--', '$HOME', '!', ';|&', ''),
  );

  it('random arguments keep their word boundaries and bytes', () => {
    fc.assert(
      fc.property(fc.array(arg, { maxLength: 6 }), (args) => {
        const direct = execFileSync('sh', ['-c', `printf '%s\\0' ${args.map(shQuote).join(' ')}`], { encoding: 'utf8' });
        const viaScript = execFileSync('sh', ['-c', shScript(`printf '%s\\0' "$@"`, args)], { encoding: 'utf8' });
        const expected = args.map((a) => `${a}\0`).join('');
        // `printf '%s\0'` with no arguments prints one empty field.
        expect(direct).toBe(args.length ? expected : '\0');
        expect(viaScript).toBe(args.length ? expected : '\0');
      }),
      { seed: SEED, numRuns: Math.min(SIZES.fuzzRuns, 200) },
    );
  });

  it('a value with a NUL byte (or not a string) is refused with CAIRN_CONFIG', () => {
    fc.assert(
      fc.property(fc.oneof(fc.tuple(wellFormed, wellFormed).map(([a, b]) => `${a}\0${b}`), fc.anything().filter((v) => typeof v !== 'string')), (bad) => {
        expect(() => shQuote(bad as string)).toThrow();
        try {
          shQuote(bad as string);
        } catch (err) {
          expect(typed(err, ['CAIRN_CONFIG'])).toBe(true);
        }
      }),
      params,
    );
  });
});

describe('public inputs: names, versions, pins, overrides, prefixes, maxConcurrent, pools, executor names, resources, option keys', () => {
  const fn = () => 1;
  // A referenced function, so any executor name is a routing choice (an inline closure may only run inline).
  const referenced = defineStep(import.meta.url, 'fuzzStep', () => 1);
  const step = (extra: Record<string, unknown>, f: unknown = fn) => lower(apply({ name: 'f', version: 'v1', fn: f, inputs: { out: OUT }, ...extra } as never));

  it('names and versions, through apply + lower and new StepSpec', () => {
    fc.assert(
      fc.property(names, (c) => {
        feed('apply name', c, (v) => step({ name: v }));
        feed('apply version', c, (v) => step({ version: v }));
        feed('StepSpec name', c, (v) => new StepSpec({ name: v as string }));
        feed('StepSpec version', c, (v) => new StepSpec({ name: 's', version: v as string }));
      }),
      params,
    );
  });

  it('pins and overrideOutputPath', () => {
    fc.assert(
      fc.property(locations, (c) => {
        feed('pin', c, (v) => step({ pin: v }));
        feed('overrideOutputPath', c, (v) => new StepSpec({ name: 's', overrideOutputPath: v as string }));
      }),
      params,
    );
  });

  it('prefixes, through resolvePrefix and the StepRunner option validator', () => {
    fc.assert(
      fc.property(prefixes, (c) => {
        feed('resolvePrefix', c, (v) => resolvePrefix(v));
        feed('StepRunner prefix', c, (v) => checkStepRunnerOptions({ prefix: v }));
      }),
      params,
    );
  });

  it('maxConcurrent and pools, through the StepRunner and run() option validators', () => {
    fc.assert(
      fc.property(maxConcurrent, pools, (m, p) => {
        feed('StepRunner maxConcurrent', m, (v) => checkStepRunnerOptions({ maxConcurrent: v }));
        feed('run maxConcurrent', m, (v) => checkRunOptions({ maxConcurrent: v }));
        feed('StepRunner pools', p, (v) => checkStepRunnerOptions({ pools: v }));
      }),
      params,
    );
  });

  it('executor names, on steps and as the runner default (which must also be registered)', () => {
    fc.assert(
      fc.property(executorNames, (c) => {
        feed('apply executor', c, (v) => step({ executor: v }, referenced));
        feed('StepSpec executor', c, (v) => new StepSpec({ name: 's', executor: v as string }));
        const registered = { value: c.value, valid: c.valid && ['inline', 'threads', 'process'].includes(c.value as string) };
        feed('StepRunner defaultExecutor', registered, (v) => checkStepRunnerOptions({ defaultExecutor: v }));
      }),
      params,
    );
  });

  it('resources, through apply + lower and new StepSpec', () => {
    fc.assert(
      fc.property(resources, (c) => {
        feed('apply resources', c, (v) => step({ resources: v }));
        feed('StepSpec resources', c, (v) => new StepSpec({ name: 's', resources: v as never }));
      }),
      params,
    );
  });

  it('optional options given null or a value of the wrong type are refused, not read as "not given"', () => {
    const nonString = [null, 1, [], () => 1, Number.NaN, true, {}];
    const nonNumber = [null, '1', [], () => 1, Number.NaN, true, {}];
    const nonObject = [null, '1', () => 1, Number.NaN, true, 1];
    const applyFields: Record<string, unknown[]> = { pin: nonString, layout: [...nonString, 'flat'], runtime: [...nonObject, []], executor: nonString, expectedFingerprint: nonString, resources: [...nonObject, []], retries: [...nonNumber, -1, 1.5], timeoutMs: [...nonNumber, 0, 3e9] };
    const specFields: Record<string, unknown[]> = {
      overrideOutputPath: nonString,
      executor: nonString,
      version: nonString,
      resources: [...nonObject, []],
      hashAttrs: [...nonObject, []],
      ref: [...nonObject, [], {}],
      deps: [...nonObject, {}, [1]],
      fn: [null, '1', Number.NaN, true, 1, [], {}],
      writesRecord: [null, 1, '1', [], {}],
      retries: [...nonNumber, -1],
      timeoutMs: [...nonNumber, 0],
    };
    const pick = (fields: Record<string, unknown[]>) => fc.constantFrom(...Object.keys(fields)).chain((f) => fc.constantFrom(...(fields[f] as unknown[])).map((v) => [f, v] as const));
    fc.assert(
      fc.property(pick(applyFields), pick(specFields), ([af, av], [sf, sv]) => {
        feed(`apply ${af}`, { value: av, valid: false }, (x) => step({ [af]: x }, referenced));
        feed(`StepSpec ${sf}`, { value: sv, valid: false }, (x) => new StepSpec({ name: 's', [sf]: x } as never));
      }),
      params,
    );
  });

  it('unknown option keys of apply, StepSpec, StepRunner and run()', () => {
    const applyKeys = ['name', 'fn', 'version', 'inputs', 'runtime', 'pin', 'layout', 'resources', 'executor', 'expectedFingerprint', 'retries', 'timeoutMs'];
    const specKeys = ['name', 'fn', 'hashAttrs', 'deps', 'resources', 'executor', 'overrideOutputPath', 'writesRecord', 'fingerprintPayload', 'ref', 'kind', 'inputs', 'version', 'fingerprint', 'expectedFingerprint', 'retries', 'timeoutMs', 'provenance', 'source', 'lowering', 'index'];
    const runnerKeys = ['maxConcurrent', 'prefix', 'executors', 'executorOptions', 'pools', 'defaultExecutor', 'remoteExecutor', 'store', 'stores', 'storeOptions', 'logger', 'onEvent', 'leases', 'infraRetries', 'preemptionRetries', 'preemptionBackoffMs', 'layout', 'onDrift', 'versions'];
    const runKeys = ['dryRun', 'forceRunFailed', 'maxConcurrent', 'signal', 'handleSigint', 'rebuild', 'acceptDrift'];
    const all = [...new Set([...applyKeys, ...specKeys, ...runnerKeys, ...runKeys])];
    fc.assert(
      fc.property(withUnknownKey(all), fc.anything(), (key, v) => {
        const c: Case = { value: { [key]: v }, valid: false };
        feed('apply key', c, (o) => step(o as Record<string, unknown>));
        feed('StepSpec key', c, (o) => new StepSpec({ name: 's', ...(o as object) } as never));
        feed('StepRunner key', c, (o) => checkStepRunnerOptions(o));
        feed('run key', c, (o) => checkRunOptions(o));
      }),
      params,
    );
  });
});
