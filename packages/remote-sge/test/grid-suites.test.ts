/** The grid suites (tools/testenv/grid-suites.ts) on a REAL one-host Grid Engine cell: packing, and a StepRunner with local and SGE steps. */
import { describe } from 'vitest';
import { sgeTestCluster } from '../../../tools/testenv/grid-clusters.js';
import { describePacking, describeRunner, type ExecutorFactory } from '../../../tools/testenv/grid-suites.js';
import { missingSgeBinaries } from '../../../tools/testenv/sge.js';
import { createSgeExecutor } from '../src/index.js';

const skip = missingSgeBinaries().length > 0 && !process.env.CI;
const create: ExecutorFactory = (cluster, options) => createSgeExecutor({ env: cluster.env, ...options });

describe.skipIf(skip)('Grid Engine', () => {
  describePacking('Grid Engine', sgeTestCluster, create);
  describeRunner('Grid Engine', sgeTestCluster, create, { single: true });
});
