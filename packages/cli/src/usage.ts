/** How an attempt's measured usage reads (CPU time, peak memory, exit code). */
import type { AttemptUsage } from '@cairn/runner';
import { formatBytes } from './bytes.js';
import { formatDuration } from './table.js';

export { formatBytes } from './bytes.js';

/** What `cpuMs` covers, as a suffix (`` for a whole process or tree). */
function cpuScopeLabel(u: AttemptUsage): string {
  if (u.cpuScope === 'thread') return ' (thread)';
  if (u.cpuScope === 'runner') return ' (runner process, best effort)';
  if (u.cpuScope === 'tree' && u.childCpuMs !== undefined) return ` (thread + children ${formatDuration(u.childCpuMs)})`;
  return '';
}

/** The peak memory to show for an attempt and what it is (`rss`, `heap`, `tree rss`…); undefined when none was measured. */
export function peakMemoryOf(u: AttemptUsage): { bytes: number; kind: string } | undefined {
  // A threads step's children: their resident memory says more than the thread's heap.
  if (u.childPeakRssBytes !== undefined && (u.peakMemoryBytes === undefined || u.childPeakRssBytes > u.peakMemoryBytes)) return { bytes: u.childPeakRssBytes, kind: 'children rss' };
  if (u.peakMemoryBytes === undefined) return undefined;
  if (u.memoryKind === 'heap') return { bytes: u.peakMemoryBytes, kind: 'heap' };
  return { bytes: u.peakMemoryBytes, kind: u.memoryScope === 'runner' ? 'runner rss' : 'rss' };
}

/** `gpu 1.2 GiB 40%`, or `` when no GPU was measured. */
export function formatGpu(u: AttemptUsage): string {
  if (u.gpuPeakMemoryBytes === undefined) return '';
  return `gpu ${formatBytes(u.gpuPeakMemoryBytes)}${u.gpuUtilizationPercent !== undefined ? ` ${u.gpuUtilizationPercent}%` : ''}`;
}

/** `cpu 1.2s · peak rss 80 MiB · gpu 1.2 GiB 40% · exit 0`: what the executor measured, each fact labelled with what it is. */
export function formatUsage(u: AttemptUsage): string {
  const parts: string[] = [];
  if (u.cpuMs !== undefined) parts.push(`cpu ${formatDuration(u.cpuMs)}${cpuScopeLabel(u)}`);
  const mem = peakMemoryOf(u);
  if (mem !== undefined) parts.push(`${mem.kind === 'heap' ? 'heap' : `peak ${mem.kind}`} ${formatBytes(mem.bytes)}`);
  if (u.childPeakRssBytes !== undefined && mem?.kind !== 'children rss' && u.peakMemoryBytes !== undefined) parts.push(`children rss ${formatBytes(u.childPeakRssBytes)}`);
  const gpu = formatGpu(u);
  if (gpu !== '') parts.push(gpu);
  if (u.signal) parts.push(`killed by ${u.signal}`);
  else if (u.exitCode !== undefined && u.exitCode !== null) parts.push(`exit ${u.exitCode}`);
  return parts.join(' · ');
}
