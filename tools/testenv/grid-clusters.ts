/**
 * The real schedulers of the grid tests behind one small interface, so a test suite runs
 * unchanged on Slurm (tools/testenv/slurm.ts) and Grid Engine (tools/testenv/sge.ts).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startSge } from './sge.js';
import { startSlurm } from './slurm.js';

const run = promisify(execFile);

/** A running test scheduler. */
export interface GridTestCluster {
  /** `slurm` or `sge`. */
  readonly scheduler: 'slurm' | 'sge';
  /** Environment its commands need (`SLURM_CONF`; `SGE_ROOT`, `SGE_CELL`, ports). */
  readonly env: Readonly<Record<string, string>>;
  /** Cancels a job or array task from outside Cairn, as a user or admin would (`scancel`, `qdel`). */
  externalCancel(id: string): Promise<void>;
  /** The scheduler's own list of its jobs (array tasks one by one), with their names. */
  jobs(): Promise<{ id: string; name: string }[]>;
  /** Stops it. */
  stop(): Promise<void>;
}

const exec = async (env: Readonly<Record<string, string>>, cmd: string, args: string[]): Promise<string> => (await run(cmd, args, { env: { ...process.env, ...env } })).stdout;

/** What a test does to a scheduler behind Cairn's back. */
export type SchedulerOps = Pick<GridTestCluster, 'externalCancel' | 'jobs'>;

/** Outside cancels and the job list of a Slurm (`SLURM_CONF` in `env`). */
export function slurmOps(env: Readonly<Record<string, string>>): SchedulerOps {
  return {
    externalCancel: async (id) => void (await exec(env, 'scancel', [id])),
    async jobs() {
      const out = await exec(env, 'squeue', ['-h', '-r', '-t', 'all', '-o', '%i|%j']);
      return out.split('\n').filter(Boolean).map((l) => ({ id: l.split('|')[0] as string, name: l.split('|')[1] ?? '' }));
    },
  };
}

/** A private single-node Slurm (no slurmrestd). */
export async function slurmTestCluster(): Promise<GridTestCluster> {
  const c = await startSlurm({ rest: false });
  return { scheduler: 'slurm', env: c.env, ...slurmOps(c.env), stop: () => c.stop() };
}

/** A private one-host Grid Engine cell. */
export async function sgeTestCluster(): Promise<GridTestCluster> {
  const c = await startSge({ slots: 8 });
  return { scheduler: 'sge', env: c.env, ...sgeOps(c.env), stop: () => c.stop() };
}

/** Outside cancels and the job list of a Grid Engine cell (`SGE_ROOT`… in `env`). */
export function sgeOps(env: Readonly<Record<string, string>>): SchedulerOps {
  return {
    externalCancel: async (id) => void (await exec(env, 'qdel', [id])),
    async jobs() {
      const xml = await exec(env, 'qstat', ['-xml']);
      const out: { id: string; name: string }[] = [];
      for (const m of xml.matchAll(/<job_list\b[^>]*>([\s\S]*?)<\/job_list>/g)) {
        const block = m[1] as string;
        const id = /<JB_job_number>(\d+)</.exec(block)?.[1];
        const name = /<JB_name>([^<]*)</.exec(block)?.[1] ?? '';
        const tasks = /<tasks>([^<]*)</.exec(block)?.[1];
        if (id) out.push({ id: tasks ? `${id}.${tasks}` : id, name });
      }
      return out;
    },
  };
}
