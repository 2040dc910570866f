/** Slurm as a grid-core scheduler: the adapter between `GridScheduler` and a Slurm transport (CLI or REST). */
import { CairnError } from '@cairn/core';
import { localCommandRunner, type GridScheduler } from '@cairn/grid';
import { cliTransport } from './cli.js';
import type { SlurmExecutorOptions } from './options.js';
import { restTransport } from './rest.js';
import { enforcedLimit, submitSpec } from './sbatch.js';
import { slurmOutput } from './script.js';
import type { SlurmStats, SlurmTransport } from './transport.js';

/** Creates the Slurm adapter; `stats` counts its calls. */
export function slurmScheduler(options: SlurmExecutorOptions, stats: SlurmStats): GridScheduler & { readonly transport: 'cli' | 'rest' } {
  const kind = options.transport ?? 'cli';
  let transport: SlurmTransport;
  if (kind === 'rest') {
    if (!options.rest) throw new CairnError('CAIRN_CONFIG', `createSlurmExecutor: transport 'rest' needs rest: { url, user, token }.`);
    transport = restTransport(options.rest, stats, options.extraJobFields);
  } else {
    transport = cliTransport(options.exec ?? localCommandRunner({ env: options.env ?? {} }), stats, options);
  }
  return {
    name: 'slurm',
    label: 'Slurm',
    idKey: 'slurmJobId',
    transport: kind,
    arrayTaskVar: 'SLURM_ARRAY_TASK_ID',
    enforcedLimit,
    submit(r) {
      const array = r.array !== undefined;
      const spec = submitSpec(r.resources, options, { name: r.name, scriptPath: r.scriptPath, script: r.script, workdir: r.workdir, slurmOutput: slurmOutput(r.outputDir, array) });
      return transport.submit({ ...spec, warnSeconds: r.warnSeconds, arraySize: r.array?.size, hideEnv: r.hideEnv });
    },
    taskId: (arrayId, index) => `${arrayId}_${index}`,
    query: (ids) => transport.query(ids),
    finished: (ids) => transport.finished(ids),
    cancel: (ids) => transport.cancel(ids),
  };
}
