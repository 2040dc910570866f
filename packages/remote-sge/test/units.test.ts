/** Pure parts: qsub arguments, qstat -xml and qacct parsing (output captured from SGE 8.1.9), the state table. */
import { describe, expect, test } from 'vitest';
import type { SubmitRequest } from '@cairn/grid';
import { expandTasks, parseQacct, parseQstat } from '../src/parse.js';
import { formatDuration, parseSubmitted, qsubArgs } from '../src/qsub.js';
import { accountingInfo, qstatInfo } from '../src/states.js';

const request = (p: Partial<SubmitRequest> = {}): SubmitRequest => ({
  name: 'cairn-x',
  scriptPath: '/d/job.sh',
  script: '#!/bin/bash',
  workdir: '/w',
  outputDir: '/d',
  resources: {},
  warnSeconds: 0,
  ...p,
});

describe('qsub arguments', () => {
  test('a submit script run by bash, with the submitting environment, not rerunnable; resources become -l, -pe, -q, -P', () => {
    expect(qsubArgs(request(), {})).toEqual(['-terse', '-N', 'cairn-x', '-wd', '/w', '-o', '/d/sge-$JOB_ID.$TASK_ID.out', '-j', 'y', '-S', '/bin/bash', '-V', '-r', 'n', '/d/job.sh']);
    const args = qsubArgs(request({ resources: { cpu: 4, memoryGb: 8, gpus: { count: 2, type: 'a100' }, timeLimit: 3700, hints: { queue: 'gpu.q' } }, array: { size: 5 } }), {
      parallelEnvironment: 'smp',
      gpuTypeResource: 'gpu_type',
      project: 'lab',
      extraArgs: ['-l', 'scratch=1G'],
    });
    expect(args.join(' ')).toBe(
      '-terse -N cairn-x -wd /w -o /d/sge-$JOB_ID.$TASK_ID.out -j y -S /bin/bash -V -r n -t 1-5 -pe smp 4 -l h_rt=1:01:40,h_vmem=2G,gpu=2,gpu_type=a100 -q gpu.q -P lab -l scratch=1G /d/job.sh',
    );
    expect(qsubArgs(request({ resources: { memoryGb: 1.5 } }), { memoryResource: 'mem_free' })).toContain('mem_free=1536M');
    expect(qsubArgs(request({ resources: { memoryGb: 1 } }), { memoryResource: null })).not.toContain('-l');
  });

  test('requests the cell cannot express are CAIRN_CONFIG', () => {
    expect(() => qsubArgs(request({ resources: { cpu: 2 } }), {})).toThrow(expect.objectContaining({ code: 'CAIRN_CONFIG', message: expect.stringMatching(/parallelEnvironment/) }));
    expect(() => qsubArgs(request({ resources: { gpus: { count: 1, type: 'h100' } } }), {})).toThrow(/gpuTypeResource/);
  });

  test('durations and qsub -terse output', () => {
    expect(formatDuration(5)).toBe('0:00:05');
    expect(formatDuration(90_061)).toBe('25:01:01');
    expect(parseSubmitted('12\n')).toBe('12');
    expect(parseSubmitted('7.1-40:1\n')).toBe('7');
    expect(parseSubmitted('Your job 12 ("x") has been submitted')).toBeUndefined();
  });
});

describe('qstat -xml', () => {
  const xml = `<?xml version='1.0'?>
<job_info  xmlns:xsd="http://arc.liv.ac.uk/repos/darcs/sge/source/dist/util/resources/schemas/qstat/qstat.xsd">
  <queue_info>
    <job_list state="running">
      <JB_job_number>2</JB_job_number>
      <JAT_prio>0.50000</JAT_prio>
      <JB_name>arr</JB_name>
      <JB_owner>root</JB_owner>
      <state>r</state>
      <JAT_start_time>2026-12-01T08:40:38</JAT_start_time>
      <queue_name>all.q@vm</queue_name>
      <slots>1</slots>
      <tasks>1</tasks>
    </job_list>
    <job_list state="running">
      <JB_job_number>3</JB_job_number>
      <JAT_prio>0.50000</JAT_prio>
      <JB_name>one</JB_name>
      <JB_owner>root</JB_owner>
      <state>dr</state>
      <queue_name>all.q@vm</queue_name>
      <slots>1</slots>
    </job_list>
  </queue_info>
  <job_info>
    <job_list state="pending">
      <JB_job_number>2</JB_job_number>
      <JAT_prio>0.00000</JAT_prio>
      <JB_name>arr</JB_name>
      <JB_owner>root</JB_owner>
      <state>qw</state>
      <JB_submission_time>2026-12-01T08:40:37</JB_submission_time>
      <queue_name></queue_name>
      <slots>1</slots>
      <tasks>2-5:1</tasks>
    </job_list>
    <job_list state="pending">
      <JB_job_number>4</JB_job_number>
      <state>Eqw</state>
    </job_list>
  </job_info>
</job_info>
`;

  test('jobs and array tasks, pending ranges expanded', () => {
    expect([...parseQstat(xml)]).toEqual([
      ['2.1', 'r'],
      ['3', 'dr'],
      ['2.2', 'qw'],
      ['2.3', 'qw'],
      ['2.4', 'qw'],
      ['2.5', 'qw'],
      ['4', 'Eqw'],
    ]);
    expect(expandTasks('1,3,5-9:2')).toEqual([1, 3, 5, 7, 9]);
  });

  test('state letters', () => {
    expect(qstatInfo('qw').class).toBe('queued');
    expect(qstatInfo('hqw').class).toBe('queued');
    expect(qstatInfo('r').class).toBe('running');
    expect(qstatInfo('Rr').class).toBe('running');
    expect(qstatInfo('t').class).toBe('running');
    expect(qstatInfo('S').class).toBe('running');
    expect(qstatInfo('dr')).toMatchObject({ class: 'killed', reason: 'CANCELLED' });
    expect(qstatInfo('Eqw')).toMatchObject({ class: 'stuck', reason: 'Eqw' });
    expect(qstatInfo('z').class).toBe('unknown');
  });
});

describe('qacct -j', () => {
  const record = (jobnumber: string, taskid: string, failed: string, exit: string, extra = '') => `==============================================================
qname        all.q
hostname     vm
jobname      srt
jobnumber    ${jobnumber}
taskid       ${taskid}
failed       ${failed}
exit_status  ${exit}
ru_wallclock 6s
category     -l h_rt=5,s_rt=5
${extra}`;

  test('records by job (and task), with failed, exit_status, wallclock and h_rt', () => {
    const text = [record('4', 'undefined', '37  : qmaster enforced h_rt, h_cpu, or h_vmem limit', '137                  (Killed)'), record('6', '2', '100 : assumedly after job', '137'), record('6', '3', '0    ', '3')].join('\n');
    const r = parseQacct(text);
    expect(r.get('4')).toEqual({ failed: 37, failedText: 'qmaster enforced h_rt, h_cpu, or h_vmem limit', exitStatus: 137, wallclock: 6, hRt: 5 });
    expect(accountingInfo(r.get('4')!)).toMatchObject({ class: 'killed', reason: 'TIMEOUT' });
    expect(accountingInfo(r.get('6.2')!)).toMatchObject({ class: 'killed', reason: 'CANCELLED', exitCode: 137 });
    expect(accountingInfo(r.get('6.3')!)).toMatchObject({ class: 'failed', exitCode: 3 });
    expect(accountingInfo({ failed: 0, failedText: '', exitStatus: 0, wallclock: 1, hRt: undefined }).class).toBe('completed');
    expect(accountingInfo({ failed: 37, failedText: 'x', exitStatus: 137, wallclock: 1, hRt: 60 })).toMatchObject({ class: 'killed', reason: 'LIMIT (x)' });
    expect(accountingInfo({ failed: 26, failedText: 'opening output file', exitStatus: 0, wallclock: 0, hRt: undefined })).toMatchObject({ class: 'infrastructure', reason: 'failed 26: opening output file' });
  });
});

describe('option keys (issue 18)', () => {
  test('an unknown key names the nearest known one; known ones pass', async () => {
    const { createSgeExecutor } = await import('../src/executor.js');
    expect(() => createSgeExecutor({ queu: 'all.q' } as never)).toThrow(/createSgeExecutor\(\): unknown option "queu"; did you mean "queue"\?/);
    expect(createSgeExecutor({ queue: 'all.q', accounting: false }).name).toBe('sge');
  });
});
