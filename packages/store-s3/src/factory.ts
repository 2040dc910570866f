/**
 * How the runner finds this store: a factory that serves `s3://` prefixes
 * (`new StepRunner({ stores: [s3StoreFactory()] })`, or `stores` in `cairn.config.ts`).
 */
import type { StoreFactory } from '@cairn/runner/store';
import { checkS3StoreOptions } from './options.js';
import { S3Store, type S3StoreOptions } from './store.js';

/**
 * The runner's factory of S3 stores: serves `s3://` prefixes. `defaults` are merged under the
 * runner's `storeOptions.s3` (or the CLI config's store options).
 *
 * ```ts
 * new StepRunner({ prefix: 's3://bucket/pipelines', stores: [s3StoreFactory({ endpoint: 'http://127.0.0.1:7480' })] });
 * ```
 */
export function s3StoreFactory(defaults: S3StoreOptions = {}): StoreFactory<S3StoreOptions> {
  checkS3StoreOptions(defaults, 's3StoreFactory()');
  return {
    name: 's3',
    schemes: ['s3'],
    create: (options) => new S3Store({ ...defaults, ...checkS3StoreOptions(options, 'storeOptions.s3') }),
  };
}
