/**
 * A step's resources → the Ray job's entrypoint resources, and the check that the cluster has a
 * node able to hold them (Ray would otherwise leave the job PENDING forever).
 *
 * | Cairn                      | Ray                                                    |
 * |----------------------------|--------------------------------------------------------|
 * | `cpu` (default 1)          | `entrypoint_num_cpus`                                  |
 * | `gpus` (count)             | `entrypoint_num_gpus` (Ray sets CUDA_VISIBLE_DEVICES)  |
 * | `gpus.type`                | `entrypoint_resources["accelerator_type:<type>"]: 0.001` (Ray's accelerator label) |
 * | `memoryGb`                 | `entrypoint_memory` (bytes)                            |
 * | `hints.ray.resources`      | `entrypoint_resources` (custom resources)              |
 */
import { CairnError, type Resources } from '@cairn/core';
import type { RayNodeInfo, RaySubmitBody } from './client.js';
import type { RayStepHints } from './options.js';

/** The entrypoint resource fields of a submission. */
export type EntrypointResources = Pick<RaySubmitBody, 'entrypoint_num_cpus' | 'entrypoint_num_gpus' | 'entrypoint_memory' | 'entrypoint_resources'>;

const GIB = 1024 ** 3;

/** Maps a step's resources to Ray's. */
export function entrypointResources(resources: Resources, hints: RayStepHints): EntrypointResources {
  const gpus = typeof resources.gpus === 'number' ? resources.gpus : (resources.gpus?.count ?? 0);
  const type = typeof resources.gpus === 'object' ? resources.gpus.type : undefined;
  const custom: Record<string, number> = { ...hints.resources };
  if (type) custom[`accelerator_type:${type}`] = 0.001;
  return {
    entrypoint_num_cpus: resources.cpu ?? 1,
    ...(gpus > 0 ? { entrypoint_num_gpus: gpus } : {}),
    ...(resources.memoryGb !== undefined ? { entrypoint_memory: Math.round(resources.memoryGb * GIB) } : {}),
    ...(Object.keys(custom).length > 0 ? { entrypoint_resources: custom } : {}),
  };
}

/** `{ CPU: 2, GPU: 1, memory: … }` of what the entrypoint asks. */
function wanted(r: EntrypointResources): Record<string, number> {
  return {
    ...(r.entrypoint_num_cpus ? { CPU: r.entrypoint_num_cpus } : {}),
    ...(r.entrypoint_num_gpus ? { GPU: r.entrypoint_num_gpus } : {}),
    ...(r.entrypoint_memory ? { memory: r.entrypoint_memory } : {}),
    ...r.entrypoint_resources,
  };
}

function describe(name: string, amount: number): string {
  return name === 'memory' ? `${(amount / GIB).toFixed(1)} GiB memory` : `${amount} ${name}`;
}

/**
 * Null when some alive node has everything `r` asks for; else a `CAIRN_EXECUTOR` error naming
 * what is missing and what each kind of node offers.
 */
export function unplaceable(r: EntrypointResources, nodes: readonly RayNodeInfo[], step: string, address: string): CairnError | null {
  const want = wanted(r);
  if (nodes.some((n) => Object.entries(want).every(([k, v]) => (n.resources_total[k] ?? 0) >= v))) return null;
  const best: Record<string, number> = {};
  for (const n of nodes) for (const k of Object.keys(want)) best[k] = Math.max(best[k] ?? 0, n.resources_total[k] ?? 0);
  const short = Object.entries(want)
    .filter(([k, v]) => (best[k] ?? 0) < v)
    .map(([k, v]) => `${describe(k, v)} (the largest node has ${describe(k, best[k] ?? 0)})`);
  const offers = [...new Set(nodes.map((n) => ['CPU', 'GPU', 'memory', ...Object.keys(want)].filter((k, i, a) => a.indexOf(k) === i && n.resources_total[k]).map((k) => describe(k, n.resources_total[k] as number)).join(', ')))];
  return new CairnError(
    'CAIRN_EXECUTOR',
    `Step "${step}" asks Ray for ${short.join(' and ')}, which no node of the cluster at ${address} has, so the job would wait forever. The cluster's ${nodes.length} node(s) offer: ${offers.map((o) => `[${o}]`).join(' ') || 'nothing'}. Lower the step's resources, or route it to another executor.`,
    { step },
  );
}
