// A runner with a grid executor in its own process, for the adoption tests (imports the BUILT packages).
//   node grid-runner-child.mjs <slurm|sge> <prefix> <options JSON> <count> <tag>
// The steps are napSteps(<scheduler>, count, tag) of grid-pipelines.mjs, as the test builds them.
import { StepRunner } from '@cairn/runner';
import { gridExecutor, napSteps } from './grid-pipelines.mjs';

const [scheduler, prefix, options, count, tag] = process.argv.slice(2);
const executor = await gridExecutor(scheduler, JSON.parse(options));
await new StepRunner({ prefix, executors: [executor], maxConcurrent: 100 }).run(napSteps(scheduler, Number(count), tag), { handleSigint: false });
