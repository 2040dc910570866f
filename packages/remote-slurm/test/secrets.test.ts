/** Secrets on a REAL single-node Slurm (tools/testenv/grid-secrets.ts): delivered through a 0600 file the wrapper reads and deletes, never in a script, an argument or a log. */
import { describe } from 'vitest';
import { slurmTestCluster } from '../../../tools/testenv/grid-clusters.js';
import { describeSecrets } from '../../../tools/testenv/grid-secrets.js';
import { createSlurmExecutor } from '../src/index.js';
import { skipSlurm } from './helpers.js';

describe.skipIf(skipSlurm)('Slurm', () => {
  describeSecrets('slurm', slurmTestCluster, (cluster, options) => createSlurmExecutor({ env: cluster.env, ...options }));
});
