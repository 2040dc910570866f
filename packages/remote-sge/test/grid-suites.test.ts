/** The grid suites (tools/testenv/grid-suites.ts) on a REAL one-host Grid Engine cell: packing, and a StepRunner with local and SGE steps. */
import { describe } from 'vitest';
import { sgeTestCluster } from '../../../tools/testenv/grid-clusters.js';
import { describePacking, describeRunner, type ExecutorFactory } from '../../../tools/testenv/grid-suites.js';
import { createSgeExecutor } from '../src/index.js';
import { skipSge } from './helpers.js';

const create: ExecutorFactory = (cluster, options) => createSgeExecutor({ env: cluster.env, ...options });

describe.skipIf(skipSge)('Grid Engine', () => {
  describePacking('Grid Engine', sgeTestCluster, create);
  describeRunner('Grid Engine', sgeTestCluster, create, { single: true });
});
