/**
 * Numbers the tests hand to the summary reporter (`reporter.ts`). Tests run in worker
 * processes, so each section is one JSON file under `.test-results/reliability/`; the
 * reporter reads them when the run ends.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where sections are written (the reporter clears it when a run starts). */
export const METRICS_DIR = fileURLToPath(new URL('../../../.test-results/reliability/', import.meta.url));

/** One value of a section: a number (summed across writes) or text/flags (last write wins). */
export type MetricValue = number | string | boolean;

/** Adds numbers to, and sets other values of, one section. */
export function record(section: string, values: Readonly<Record<string, MetricValue>>): void {
  mkdirSync(METRICS_DIR, { recursive: true });
  const file = join(METRICS_DIR, `${section}.json`);
  let current: Record<string, MetricValue> = {};
  try {
    current = JSON.parse(readFileSync(file, 'utf8')) as Record<string, MetricValue>;
  } catch {
    // First write of this section.
  }
  for (const [k, v] of Object.entries(values)) {
    const old = current[k];
    current[k] = typeof v === 'number' && typeof old === 'number' ? old + v : v;
  }
  writeFileSync(file, `${JSON.stringify(current, null, 2)}\n`);
}
