/**
 * The real sshd used by the crash matrix and the host-death fault. Without OpenSSH's server
 * the SSH parts are skipped with a message, except in CI (CI set), where that is a failure.
 */
import { afterAll, beforeAll } from 'vitest';
import { sshdOrSkip, startSshd, testHostOptions, type SshdInstance } from '../../testenv/sshd.js';
import { assertBuilt } from './env.js';

export { startSshd, type SshdInstance };

/** True when SSH steps can be included (skipped with a message outside CI when sshd is missing). */
export const sshUsable = (): boolean => sshdOrSkip('the SSH parts of the reliability suite');

/** SshHostOptions (plain JSON, for child processes) of one test sshd. */
export const hostOptions = (s: SshdInstance, name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => testHostOptions(s, name, extra);

/** What {@link useRunnerSuite} gives a test file: its sshd (when usable) and clean-ups run after all tests. */
export interface RunnerSuite {
  /** The sshd started for the file, or undefined without SSH. */
  readonly sshd: () => SshdInstance | undefined;
  /** Clean-ups run after the file's tests. */
  readonly cleanups: (() => void)[];
}

/**
 * Setup shared by the files that drive runner processes: checks the packages are built,
 * starts one sshd when SSH can be used, and stops it and runs `cleanups` afterwards.
 */
export function useRunnerSuite(): RunnerSuite {
  const withSsh = sshUsable();
  let sshd: SshdInstance | undefined;
  const cleanups: (() => void)[] = [];
  beforeAll(async () => {
    assertBuilt();
    if (withSsh) sshd = await startSshd();
  });
  afterAll(async () => {
    await sshd?.stop();
    for (const c of cleanups) c();
  });
  return { sshd: () => sshd, cleanups };
}
