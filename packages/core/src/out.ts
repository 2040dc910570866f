/**
 * `OUT`: the sentinel an input uses for the consuming step's own output path. A leaf module, so
 * the modules that encode inputs (payload.ts, template.ts, codec.ts) need not import handle.ts.
 */
import { brand, hasBrand, OUT_BRAND } from './brand.js';

/** The `OUT` sentinel's type (`__cairnOut` exists for the type checker only: the sentinel is recognised by a symbol brand). */
export interface Out {
  readonly __cairnOut: true;
}

class OutSentinel implements Out {
  declare readonly __cairnOut: true;
  toString(): string {
    return 'OUT';
  }
  toJSON(): string {
    return '<OUT>';
  }
}

/** Resolves, at run time, to the consuming step's own output path. */
export const OUT: Out = Object.freeze(new OutSentinel());

brand(OutSentinel.prototype, OUT_BRAND);

/** True for the `OUT` sentinel (also from another copy of this package; a plain object never passes). */
export function isOut(value: unknown): value is Out {
  return value === OUT || hasBrand(value, OUT_BRAND);
}
