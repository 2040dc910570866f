/**
 * `qsub` arguments for a submission: the wrapper is a submit script (never `-b y`, which loses
 * quoting), run by bash (`-S`), with the submitting environment (`-V`), not rerunnable.
 * Resources: `-l h_rt` (time), `-l h_vmem` per slot (memory), `-pe` (CPUs, where configured),
 * `-l gpu=` (GPUs), `-t 1-N` (arrays).
 */
import { CairnError, type GpuRequest, type Resources } from '@cairn/core';
import type { SubmitRequest } from '@cairn/grid';
import type { SgeExecutorOptions } from './options.js';

/** `H:MM:SS` for a number of seconds (Grid Engine enforces seconds, at least one). */
export function formatDuration(seconds: number): string {
  const s = Math.max(1, Math.ceil(seconds));
  const p = (n: number) => String(n).padStart(2, '0');
  return `${Math.floor(s / 3600)}:${p(Math.floor((s % 3600) / 60))}:${p(s % 60)}`;
}

/** A memory amount in MiB as Grid Engine reads it (`4G`, `1536M`). */
export function formatMemory(memoryMb: number): string {
  return memoryMb % 1024 === 0 ? `${memoryMb / 1024}G` : `${memoryMb}M`;
}

function hint(resources: Resources, key: string): string | undefined {
  const v = resources.hints?.[key];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function gpus(value: number | GpuRequest | undefined): { count: number; type?: string } | undefined {
  if (value === undefined) return undefined;
  const count = Math.ceil(typeof value === 'number' ? value : value.count);
  if (!(count > 0)) return undefined;
  return typeof value === 'object' && value.type ? { count, type: value.type } : { count };
}

/** `qsub` arguments (ending with the script path). Throws `CAIRN_CONFIG` for a request this cell cannot express. */
export function qsubArgs(r: SubmitRequest, options: SgeExecutorOptions): string[] {
  const res = r.resources;
  const args = ['-terse', '-N', r.name, '-wd', r.workdir, '-o', `${r.outputDir}/sge-$JOB_ID.$TASK_ID.out`, '-j', 'y', '-S', '/bin/bash', '-V'];
  args.push('-r', options.rerunnable ? 'y' : 'n');
  if (r.array !== undefined) args.push('-t', `1-${r.array.size}`);
  const cpus = res.cpu !== undefined && res.cpu > 0 ? Math.ceil(res.cpu) : 1;
  if (cpus > 1) {
    if (!options.parallelEnvironment) {
      throw new CairnError('CAIRN_CONFIG', `A step asks for ${cpus} CPUs: set the Grid Engine executor's parallelEnvironment (e.g. 'smp') so it can request them with -pe, or ask for one CPU.`);
    }
    args.push('-pe', options.parallelEnvironment, String(cpus));
  }
  const limits: string[] = [];
  if (res.timeLimit !== undefined) limits.push(`h_rt=${formatDuration(res.timeLimit)}`);
  const memory = options.memoryResource === undefined ? 'h_vmem' : options.memoryResource;
  if (memory !== null && res.memoryGb !== undefined && res.memoryGb > 0) limits.push(`${memory}=${formatMemory(Math.ceil((res.memoryGb * 1024) / cpus))}`);
  const gpu = gpus(res.gpus);
  if (gpu) {
    limits.push(`${options.gpuResource ?? 'gpu'}=${gpu.count}`);
    if (gpu.type !== undefined) {
      if (!options.gpuTypeResource) throw new CairnError('CAIRN_CONFIG', `A step asks for ${gpu.type} GPUs: set the Grid Engine executor's gpuTypeResource (the complex that selects a GPU type), or drop the type.`);
      limits.push(`${options.gpuTypeResource}=${gpu.type}`);
    }
  }
  if (limits.length > 0) args.push('-l', limits.join(','));
  const queue = hint(res, 'queue') ?? options.queue;
  const project = hint(res, 'project') ?? options.project;
  const account = hint(res, 'account') ?? options.account;
  if (queue) args.push('-q', queue);
  if (project) args.push('-P', project);
  if (account) args.push('-A', account);
  args.push(...(options.extraArgs ?? []), r.scriptPath);
  return args;
}

/** The job id in `qsub -terse` output (`12`, or `12.1-5:1` for an array). */
export function parseSubmitted(stdout: string): string | undefined {
  const m = /^(\d+)(\.\d+-\d+:\d+)?$/.exec(stdout.trim());
  return m ? m[1] : undefined;
}
