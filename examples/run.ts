// Runs the example pipeline end to end: shows the plan (nothing runs), runs it, prints the
// results, then runs it again to show that everything is served from the store.
//
//   bash scripts/example.sh                      # in-process ("inline")
//   bash scripts/example.sh --executor process   # each step in its own child process
//   bash scripts/example.sh --prefix /tmp/store  # another store
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { backend, lower } from '@cairn/core';
import { StepRunner } from '@cairn/runner';
import { targets } from './pipeline.js';

const { values } = parseArgs({
  options: {
    executor: { type: 'string', default: 'inline' },
    prefix: { type: 'string', default: resolve(import.meta.dirname, '..', '.cairn', 'example') },
  },
});
const executor = values.executor as string;
// Child processes and threads re-import the .ts step module, so they need the TypeScript loader.
const tsLoader = ['--import', 'tsx'];
const runner = new StepRunner({
  prefix: values.prefix,
  defaultExecutor: executor,
  executorOptions: { process: { nodeArgs: tsLoader }, threads: { execArgv: tsLoader } },
});

const specs = lower(targets);
console.log(`backend: ${backend}; store: ${runner.prefix()}; executor: ${executor}\n`);

const plan = await runner.plan(specs);
console.log('plan (nothing has run):');
for (const s of plan.steps) console.log(`  ${s.state.padEnd(13)} ${s.nameWithHash.padEnd(30)} ${s.path}`);

const t0 = performance.now();
const first = await runner.run(specs);
console.log(`\nrun: ${JSON.stringify(first.counts)} in ${(performance.now() - t0).toFixed(0)} ms`);

const [evaluation] = await runner.load(specs);
console.log(`result: ${JSON.stringify(evaluation?.value)}`);

const t1 = performance.now();
const second = await runner.run(specs);
console.log(`rerun: ${JSON.stringify(second.counts)} in ${(performance.now() - t1).toFixed(1)} ms (everything cached)`);
