// Compiled by test/types.test.ts with tsc: every @ts-expect-error must be needed.
import { apply, OUT } from '../../src/index.js';

const tokenize = (inputs: { corpus: string; vocab: number; out: string }) => ({ tokens: inputs.vocab });
const raw = apply({ name: 'raw', fn: (_: { out: string }) => 'x', version: 'v1', inputs: { out: OUT } });

// A correct call: a handle and OUT stand where strings are expected.
const tok = apply({ name: 'tok', fn: tokenize, version: 'v1', inputs: { corpus: raw, vocab: 32000, out: OUT } });
const n: number = (null as unknown as NonNullable<typeof tok.__result>).tokens;
void n;

// @ts-expect-error a typo in an input name
apply({ name: 'tok2', fn: tokenize, version: 'v1', inputs: { corpus: raw, vocabb: 32000, out: OUT } });

// @ts-expect-error a wrong input type (a handle where a number is expected)
apply({ name: 'tok3', fn: tokenize, version: 'v1', inputs: { corpus: raw, vocab: raw, out: OUT } });

// @ts-expect-error a missing input
apply({ name: 'tok4', fn: tokenize, version: 'v1', inputs: { corpus: raw, out: OUT } });

// @ts-expect-error version is required
apply({ name: 'tok5', fn: tokenize, inputs: { corpus: raw, vocab: 1, out: OUT } });
