/** Secrets on a REAL one-host Grid Engine cell (tools/testenv/grid-secrets.ts): delivered through a 0600 file the wrapper reads and deletes, never in a script, an argument or a log. */
import { describe } from 'vitest';
import { sgeTestCluster } from '../../../tools/testenv/grid-clusters.js';
import { describeSecrets } from '../../../tools/testenv/grid-secrets.js';
import { createSgeExecutor } from '../src/index.js';
import { skipSge } from './helpers.js';


describe.skipIf(skipSge)('Grid Engine', () => {
  describeSecrets('sge', sgeTestCluster, (cluster, options) => createSgeExecutor({ env: cluster.env, ...options }));
});
