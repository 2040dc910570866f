/**
 * The real sshd used by the crash matrix and the host-death fault. Without OpenSSH's server
 * the SSH parts are skipped with a message, except in CI (CI set), where that is a failure.
 */
import { sshdOrSkip, startSshd, testHostOptions, type SshdInstance } from '../../testenv/sshd.js';

export { startSshd, type SshdInstance };

/** True when SSH steps can be included (skipped with a message outside CI when sshd is missing). */
export const sshUsable = (): boolean => sshdOrSkip('the SSH parts of the reliability suite');

/** SshHostOptions (plain JSON, for child processes) of one test sshd. */
export const hostOptions = (s: SshdInstance, name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => testHostOptions(s, name, extra);
