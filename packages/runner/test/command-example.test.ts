/**
 * examples/ml (Python programs as command steps: corpus -> tokenize -> train -> eval) end to end,
 * in-process, with real python3.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { run } from '../src/index.js';

const EXAMPLE = fileURLToPath(new URL('../../../examples/ml/', import.meta.url));
const base = mkdtempSync(join(tmpdir(), 'cairn-ml-example-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('examples/ml', () => {
  it('runs end to end in-process; a rerun runs nothing', async () => {
    const { evaluation, model } = await import('../../../examples/ml/pipeline.js');
    const prefix = join(base, 'store');
    const events: string[] = [];
    const [result] = await run(evaluation, { prefix, onEvent: (e) => void (e.type === 'step' && e.state === 'running' && events.push(e.step)) });
    const value = result.value as { perplexity: number; pairs: number };
    expect(value.pairs).toBeGreaterThan(0);
    expect(value.perplexity).toBeGreaterThan(1);
    expect(value.perplexity).toBeLessThan(24);
    expect(new Set(events)).toEqual(new Set(['corpus', 'tokenize', 'train', 'eval']));
    const [trained] = await run(model, { prefix });
    expect(trained.value).toEqual({ epochs: 3, resumedFrom: 0 });
    // Checkpoints lived beside the output, in the step's checkpoint directory, removed by the SUCCESS commit.
    expect(readdirSync(trained.path).filter((n) => n.includes('checkpoint'))).toEqual([]);
    expect(readdirSync(join(trained.path, '..')).filter((n) => n.includes('cairn-checkpoints'))).toEqual([]);
    const again: string[] = [];
    await run(evaluation, { prefix, onEvent: (e) => void (e.type === 'step' && e.state === 'running' && again.push(e.step)) });
    expect(again).toEqual([]);
  }, 120_000);

  it('train.py resumes from the latest checkpoint it finds', async () => {
    const { tokens } = await import('../../../examples/ml/pipeline.js');
    const [tok] = await run(tokens, { prefix: join(base, 'store') });
    const out = join(base, 'resume');
    const ckpt = join(base, 'ckpt');
    const train = (epochs: number) => {
      const resultPath = join(base, `result-${epochs}.json`);
      execFileSync('python3', ['train.py', '--tokens', tok.path, '--epochs', String(epochs), '--out', out, '--checkpoints', ckpt], {
        cwd: EXAMPLE,
        env: { ...process.env, PYTHONPATH: '../../python', CAIRN_RESULT: resultPath },
        stdio: 'ignore',
      });
      return JSON.parse(readFileSync(resultPath, 'utf8')) as { result: { resumedFrom: number } };
    };
    expect(train(2).result.resumedFrom).toBe(0);
    expect(train(4).result.resumedFrom).toBe(2);
  }, 60_000);
});
