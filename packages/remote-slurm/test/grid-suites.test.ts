/** The grid suites (tools/testenv/grid-suites.ts) on a REAL single-node Slurm: packing, and a StepRunner with packed steps. */
import { describe } from 'vitest';
import { slurmTestCluster } from '../../../tools/testenv/grid-clusters.js';
import { describePacking, describeRunner, type ExecutorFactory } from '../../../tools/testenv/grid-suites.js';
import { createSlurmExecutor } from '../src/index.js';
import { skipSlurm } from './helpers.js';

const create: ExecutorFactory = (cluster, options) => createSlurmExecutor({ env: cluster.env, ...options });

describe.skipIf(skipSlurm)('Slurm', () => {
  describePacking('Slurm', slurmTestCluster, create);
  describeRunner('Slurm', slurmTestCluster, create);
});
