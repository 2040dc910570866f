/**
 * A vitest reporter that keeps retries visible: CI runs every project with `retry: 1` (tests
 * drive real sshd, Slurm, Grid Engine, Ceph RGW, Ray and Chromium on 2 shared cores, where a
 * rare timing miss is not a regression), and this writes each test that passed only on its retry
 * to `.test-results/{project}.retried.log`, which `test-summary.mjs` prints under the totals.
 * A retried test is still a defect to look at: it is listed, never hidden.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Reporter, TestCase } from 'vitest/node';

export default class RetryReporter implements Reporter {
  readonly #file: string;

  constructor(file: string) {
    this.#file = file;
  }

  onTestCaseResult(test: TestCase): void {
    const d = test.diagnostic();
    if (d === undefined || d.retryCount === 0) return;
    const outcome = test.result().state === 'passed' ? 'passed on retry' : 'failed after retry';
    mkdirSync(dirname(this.#file), { recursive: true });
    appendFileSync(this.#file, `${outcome}: ${test.module.relativeModuleId} > ${test.fullName}\n`);
  }
}
