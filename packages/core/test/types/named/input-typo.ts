// Compiled by test/types.test.ts, which expects exactly this error: the compiler must name the typo
// ("'tokns' does not exist in type …"), not a missing `runtime` property of another overload.
import { apply, OUT } from '../../../src/index.js';

const tokenize = (inputs: { corpus: string; tokens: number; out: string }) => ({ n: inputs.tokens });
const raw = apply({ name: 'raw', fn: (_: { out: string }) => 'x', version: 'v1', inputs: { out: OUT } });
export const tok = apply({ name: 'tok', fn: tokenize, version: 'v1', inputs: { corpus: raw, tokns: 32000, out: OUT } });
