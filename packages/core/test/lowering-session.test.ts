/**
 * A lowering session (issue 32): handles lowered in pieces, each piece costing only its new
 * steps, with the identities one `lower()` call of everything gives.
 */
import { describe, expect, it } from 'vitest';
import { apply, type ArtifactStep, hasCode, lower, OUT, type StepSpec } from '../src/index.js';
import { LoweringSession, loweringWork } from '../src/internal.js';

const noop = () => undefined;

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0) / 2 ** 32);
}

/** `n` handles, each reading up to 4 earlier ones (some with a pin, a versioned layout or a pinned fingerprint). */
function randomHandles(seed: number, n: number): ArtifactStep<unknown>[] {
  const r = rng(seed);
  const hs: ArtifactStep<unknown>[] = [];
  for (let i = 0; i < n; i++) {
    const deps = i === 0 ? [] : [...new Set(Array.from({ length: Math.floor(r() * 5) }, () => hs[Math.floor(r() * i)] as ArtifactStep<unknown>))];
    const version = r() < 0.2 ? 'v2' : 'v1';
    hs.push(apply({ name: `s${i}`, version, fn: noop, inputs: { i, deps, note: r() < 0.3 ? 'é"\\' : 'x', out: OUT }, ...(r() < 0.1 ? { layout: 'versioned' as const } : {}), ...(r() < 0.05 ? { pin: `pins/p${i}` } : {}) }));
  }
  return hs;
}

describe('LoweringSession', () => {
  it('gives each handle the identity and path one lower() call gives, whatever the pieces', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const hs = randomHandles(seed, 150);
      const whole = lower(hs).map((s) => [s.nameWithHash, s.outputPath('/p'), s.fingerprint, s.deps.map((d) => d.nameWithHash).join()]);
      const r = rng(seed * 7);
      const session = new LoweringSession();
      const got: StepSpec[] = [];
      // Pieces of random sizes in random order; some handles again.
      const order = hs.map((_, i) => i).sort(() => r() - 0.5);
      for (let i = 0; i < order.length; ) {
        const k = 1 + Math.floor(r() * 8);
        const piece = order.slice(i, i + k).map((j) => hs[j] as ArtifactStep<unknown>);
        const specs = session.lower(piece);
        piece.forEach((h, j) => (got[hs.indexOf(h)] = specs[j] as StepSpec));
        i += k;
      }
      expect(got.map((s) => [s.nameWithHash, s.outputPath('/p'), s.fingerprint, s.deps.map((d) => d.nameWithHash).join()]), `seed ${seed}`).toEqual(whole);
    }
  });

  it('a handle at a time: names and versions needing escapes, many versions and pinned fingerprints hash as in one lower() call', () => {
    const hs: ArtifactStep<unknown>[] = [];
    for (let i = 0; i < 200; i++) {
      const deps = [hs[i - 1], hs[(i * 7) % Math.max(i, 1)], hs[i >> 1]].filter((d): d is ArtifactStep<unknown> => d !== undefined && i > 0);
      const h = apply({ name: i % 3 === 0 ? `s"${i}é日` : `s${i}`, version: `v\\${i % 11}`, fn: noop, inputs: { i, deps: [...new Set(deps)], out: OUT } });
      hs.push(i % 4 === 0 ? apply({ name: h.name, version: h.version, fn: noop, inputs: h.inputs as never, expectedFingerprint: h.lower().fingerprint as string }) : h);
    }
    const whole = lower(hs).map((s) => [s.nameWithHash, s.fingerprint]);
    const session = new LoweringSession();
    expect(hs.map((h) => session.lower([h])[0] as StepSpec).map((s) => [s.nameWithHash, s.fingerprint])).toEqual(whole);
    // A later call whose payloads pass a hashing chunk (48 KiB) hashes them chunk by chunk instead.
    const big = hs.map((h, i) => apply({ name: `big${i}`, version: 'v1', fn: noop, inputs: { h, pad: 'p'.repeat(600) } }));
    const two = new LoweringSession();
    two.lower([big[0]]);
    expect(two.lower(big).map((s) => [s.nameWithHash, s.fingerprint])).toEqual(lower(big).map((s) => [s.nameWithHash, s.fingerprint]));
  });

  it('returns the same spec for a handle every time and lowers each handle once', () => {
    const hs = randomHandles(99, 400);
    const session = new LoweringSession();
    const before = loweringWork.nodes;
    const first = hs.map((h) => session.lower([h])[0]);
    expect(loweringWork.nodes - before).toBe(400);
    const again = session.lower(hs);
    expect(again).toEqual(first);
    expect(again.every((s, i) => s === first[i])).toBe(true);
    expect(loweringWork.nodes - before).toBe(400);
    // A dependency's spec is the one its own call returned.
    expect(first[399]?.deps.every((d) => first.includes(d))).toBe(true);
  });

  it('merges another handle of the same step, and refuses another step with the same name@version', () => {
    const make = (x: number) => apply({ name: 'a', version: 'v1', fn: noop, inputs: { x } });
    const session = new LoweringSession();
    const [a] = session.lower([make(1)]);
    const b = apply({ name: 'b', version: 'v1', fn: noop, inputs: { a: make(1), out: OUT } });
    const [bs] = session.lower([b]);
    expect(bs?.deps[0]).toBe(a);
    let err: unknown;
    try {
      session.lower([apply({ name: 'c', version: 'v1', fn: noop, inputs: { a: make(2) } })]);
    } catch (e) {
      err = e;
    }
    expect(hasCode(err, 'CAIRN_DUPLICATE_STEP')).toBe(true);
  });

  it('after a failed call, and after a plain lower() of the same handles, still gives the same identities', () => {
    const hs = randomHandles(5, 60);
    const whole = lower(hs).map((s) => s.nameWithHash);
    const session = new LoweringSession();
    session.lower(hs.slice(0, 20));
    expect(() => session.lower([42])).toThrow(expect.objectContaining({ code: 'CAIRN_BAD_DEPENDENCY' }));
    const mid = session.lower(hs.slice(20, 40));
    lower(hs.slice(0, 50)); // re-marks these handles for another lowering
    const late = session.lower(hs.slice(40));
    const all = [...session.lower(hs.slice(0, 20)), ...mid, ...late];
    expect(all.map((s) => s.nameWithHash)).toEqual(whole);
  });

  it('refuses a mutable dependency of a fixed version across calls', () => {
    const dev = apply({ name: 'd', version: 'v1-dev', fn: noop, inputs: {} });
    const session = new LoweringSession();
    session.lower([dev]);
    const fixed = apply({ name: 'f', version: 'v1', fn: noop, inputs: { dev } });
    expect(() => session.lower([fixed])).toThrow(expect.objectContaining({ code: 'CAIRN_MUTABLE_DEPENDENCY' }));
  });
});
