/** Plain text tables for terminal output (ANSI colour codes do not count toward widths). */

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g;

function visible(s: string): number {
  return s.replace(ANSI, '').length;
}

/** Formats rows under a header; the last column is not padded. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, c) => Math.max(visible(h), ...rows.map((r) => visible(r[c] ?? ''))));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, c) => (c === cells.length - 1 ? cell : cell + ' '.repeat((widths[c] as number) - visible(cell))))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** `1.2s`, `3m04s`, `2h05m`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '-';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(Math.floor(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}
