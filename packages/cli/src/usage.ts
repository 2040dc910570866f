/** How an attempt's measured usage reads (CPU time, peak memory, exit code). */
import type { AttemptUsage } from '@cairn/runner';
import { formatDuration } from './table.js';

/** `512 KiB`, `3.2 MiB`, `1.1 GiB`. */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n) || n < 0) return '-';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v : v < 10 ? v.toFixed(1) : Math.round(v)} ${units[u]}`;
}

/** `cpu 1.2s · rss 80 MiB · exit 0`: what the executor measured, each fact labelled with what it is. */
export function formatUsage(u: AttemptUsage): string {
  const parts: string[] = [];
  if (u.cpuMs !== undefined) parts.push(`cpu ${formatDuration(u.cpuMs)}${u.cpuScope === 'thread' ? ' (thread)' : ''}`);
  if (u.peakMemoryBytes !== undefined) parts.push(`${u.memoryKind === 'heap' ? 'heap' : 'peak rss'} ${formatBytes(u.peakMemoryBytes)}`);
  if (u.signal) parts.push(`killed by ${u.signal}`);
  else if (u.exitCode !== undefined && u.exitCode !== null) parts.push(`exit ${u.exitCode}`);
  return parts.join(' · ');
}
