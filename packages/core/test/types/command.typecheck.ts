// Compiled by test/types.test.ts with tsc: every @ts-expect-error must be needed.
import { apply, artifacts, ATTEMPT, command, input, OUT, type ArtifactStep } from '../../src/index.js';

const raw = apply({ name: 'raw', fn: (_: { out: string }) => 'x', version: 'v1', inputs: { out: OUT } });

// A correct call: placeholders name declared inputs; OUT and ATTEMPT stand anywhere.
const tok = command({
  name: 'tok',
  version: 'v1',
  program: 'python3',
  args: ['tokenize.py', '--in', input('corpus'), '--vocab', input('vocab'), '--out', OUT, '--attempt', ATTEMPT],
  inputs: { corpus: raw, vocab: 32000 },
  env: { DATA: input('corpus') },
});
const h: ArtifactStep<unknown> = tok;
void h;

// With an artifact kind, the handle is typed by it.
const stats = command({ name: 'stats', version: 'v1', program: 'true', inputs: { data: tok }, args: [input('data')], artifact: artifacts.json<{ n: number }>() });
const n: number = (null as unknown as NonNullable<typeof stats.__result>).n;
void n;

// @ts-expect-error a placeholder naming no input (a typo)
command({ name: 'tok2', version: 'v1', program: 'python3', args: [input('corpsu')], inputs: { corpus: raw } });

// @ts-expect-error a placeholder in a step without inputs
command({ name: 'tok3', version: 'v1', program: 'python3', args: [input('corpus')] });

// @ts-expect-error a non-string argument
command({ name: 'tok4', version: 'v1', program: 'python3', args: ['--n', 5] });

// @ts-expect-error an env placeholder naming no input
command({ name: 'tok5', version: 'v1', program: 'python3', env: { X: input('nope') }, inputs: { corpus: raw } });

// @ts-expect-error program is required
command({ name: 'tok6', version: 'v1', args: [] });
