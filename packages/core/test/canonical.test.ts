import { describe, expect, it } from 'vitest';
import { CairnError, canonicalize, compareCodePoints, fingerprint } from '../src/index.js';

describe('canonicalize', () => {
  it('sorts keys and is independent of insertion order', () => {
    expect(canonicalize({ b: 1, a: { d: 2, c: [3, 'x'] } })).toBe('{"a":{"c":[3,"x"],"d":2},"b":1}');
    expect(canonicalize({ a: 1, b: 2 })).toBe(canonicalize({ b: 2, a: 1 }));
    expect(fingerprint({ x: 1, y: [1, 2] })).toBe(fingerprint({ y: [1, 2], x: 1 }));
  });

  it('encodes each documented type deterministically', () => {
    expect(canonicalize(null)).toBe('null');
    expect(canonicalize(undefined)).toBe('null');
    expect(canonicalize({ a: undefined, b: 1 })).toBe('{"b":1}');
    expect(canonicalize([undefined, 1])).toBe('[null,1]');
    expect(canonicalize(-0)).toBe('0');
    expect(canonicalize(1.5e300)).toBe('1.5e+300');
    expect(canonicalize(12345678901234567890n)).toBe('{"__bigint__":"12345678901234567890"}');
    expect(canonicalize(new Date(0))).toBe('{"__date__":"1970-01-01T00:00:00.000Z"}');
    expect(canonicalize(new Uint8Array([1, 2, 255]))).toBe('{"__bytes__":"AQL/"}');
    expect(canonicalize(Buffer.from('hi'))).toBe('{"__bytes__":"aGk="}');
    expect(canonicalize(new Map<unknown, unknown>([['b', 1], ['a', 2]]))).toBe('{"__map__":[["a",2],["b",1]]}');
    expect(canonicalize(new Map([['a', 2], ['b', 1]]))).toBe(canonicalize(new Map([['b', 1], ['a', 2]])));
    expect(canonicalize(new Set([3, 1, 2]))).toBe('{"__set__":[1,2,3]}');
  });

  it('uses toJSON of class instances', () => {
    class Lr {
      constructor(readonly v: number) {}
      toJSON() {
        return { lr: this.v };
      }
    }
    expect(canonicalize({ opt: new Lr(0.1) })).toBe('{"opt":{"lr":0.1}}');
  });

  it('orders keys by code point, not UTF-16 unit', () => {
    const astral = '\u{1F600}';
    const high = '\uFFFD';
    expect(compareCodePoints(astral, high)).toBeGreaterThan(0);
    expect(astral < high).toBe(true); // JavaScript's default order disagrees
    expect(canonicalize({ [astral]: 1, [high]: 2 })).toBe(`{"${high}":2,"${astral}":1}`);
  });

  const refused: [string, unknown, RegExp][] = [
    ['function', { inputs: { f: () => 1 } }, /a function \(f\) at value\.inputs\.f/],
    ['symbol', { s: Symbol('x') }, /a symbol \(x\) at value\.s/],
    ['NaN', { optimizer: { schedule: [1, 2, Number.NaN] } }, /NaN at value\.optimizer\.schedule\[2\]/],
    ['Infinity', [Infinity], /Infinity at value\[0\]/],
    ['class instance', { m: new (class Model {})() }, /instance of Model at value\.m/],
    ['typed array', { w: new Float32Array(2) }, /Float32Array at value\.w/],
    ['invalid date', { d: new Date('nope') }, /Date is invalid/],
    ['lone surrogate', { s: '\uD800' }, /lone surrogate/],
    ['reserved key', { x: { __set__: [1] } }, /reserved/],
  ];
  for (const [label, value, message] of refused) {
    it(`refuses ${label} with a path`, () => {
      let err: unknown;
      try {
        canonicalize(value);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(CairnError);
      expect((err as CairnError).code).toBe('CAIRN_CANONICAL_VALUE');
      expect((err as CairnError).message).toMatch(message);
    });
  }

  it('refuses cycles and names the step', () => {
    const a: Record<string, unknown> = { x: 1 };
    a.self = a;
    expect(() => canonicalize({ cfg: a }, { path: 'inputs', step: 'train' })).toThrow(/Step "train": .*cycle.*inputs\.cfg\.self|Step "train": cannot encode .* at inputs\.cfg\.self/);
  });

  it('allows the same object twice when it is not a cycle', () => {
    const shared = { a: 1 };
    expect(canonicalize([shared, shared])).toBe('[{"a":1},{"a":1}]');
  });
});
