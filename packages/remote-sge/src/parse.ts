/** Parsers of `qstat -xml` and `qacct -j` output (pure). */
import type { AccountingRecord } from './states.js';

/** Task numbers of a task range (`3`, `4-10:1`, `1,3,5-9:2`). */
export function expandTasks(text: string): number[] {
  const out: number[] = [];
  for (const part of text.split(',')) {
    const m = /^(\d+)(?:-(\d+)(?::(\d+))?)?$/.exec(part.trim());
    if (!m) continue;
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    const step = m[3] === undefined ? 1 : Math.max(1, Number(m[3]));
    for (let t = from; t <= to; t += step) out.push(t);
  }
  return out;
}

const tag = (block: string, name: string): string | undefined => new RegExp(`<${name}>([^<]*)</${name}>`).exec(block)?.[1];

/**
 * Every job and array task `qstat -xml` lists, as `id` or `id.task`, with its state letters.
 * Pending array tasks come as ranges and are expanded.
 */
export function parseQstat(xml: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of xml.matchAll(/<job_list\b[^>]*>([\s\S]*?)<\/job_list>/g)) {
    const block = m[1] as string;
    const id = tag(block, 'JB_job_number');
    const state = tag(block, 'state');
    if (!id || !state) continue;
    const tasks = tag(block, 'tasks');
    if (tasks === undefined) out.set(id, state);
    else for (const t of expandTasks(tasks)) out.set(`${id}.${t}`, state);
  }
  return out;
}

function seconds(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const hms = /^(\d+):(\d+):(\d+)$/.exec(text);
  if (hms) return Number(hms[1]) * 3600 + Number(hms[2]) * 60 + Number(hms[3]);
  const n = /^(\d+(?:\.\d+)?)s?$/.exec(text);
  return n ? Number(n[1]) : undefined;
}

/** Accounting records of `qacct -j ID`, keyed `id` (or `id.task` for array tasks); the last record of a key wins. */
export function parseQacct(text: string): Map<string, AccountingRecord> {
  const out = new Map<string, AccountingRecord>();
  for (const chunk of text.split(/^=+\s*$/m)) {
    const fields = new Map<string, string>();
    for (const line of chunk.split('\n')) {
      const m = /^(\w+)\s+(.*?)\s*$/.exec(line);
      if (m) fields.set(m[1] as string, m[2] as string);
    }
    const id = fields.get('jobnumber');
    const failed = /^(\d+)\s*(?::\s*(.*))?$/.exec(fields.get('failed') ?? '');
    const exit = /^(\d+)/.exec(fields.get('exit_status') ?? '');
    if (!id || !failed || !exit) continue;
    const task = fields.get('taskid');
    const hRt = /(?:^|[\s,])h_rt=([\d:.]+)/.exec(fields.get('category') ?? '')?.[1];
    out.set(task && task !== 'undefined' ? `${id}.${task}` : id, {
      failed: Number(failed[1]),
      failedText: (failed[2] ?? '').trim(),
      exitStatus: Number(exit[1]),
      wallclock: seconds(fields.get('ru_wallclock')),
      hRt: seconds(hRt),
    });
  }
  return out;
}
