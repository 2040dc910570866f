/**
 * Delivers a notification to a program: the JSON event on its stdin. The program runs in its own
 * process group so that at the timeout it is killed with everything it started (`sh -c` and its
 * children); delivery never waits longer than the timeout.
 */
import { spawn } from 'node:child_process';
import type { CommandSink, NotifyEvent } from './types.js';

/** The last part of what the program wrote to stderr that a warning quotes. */
const STDERR_TAIL = 500;

/** Runs `sink`'s program with `event` on stdin; resolves with a problem to log, or undefined when it exited 0. */
export function deliverToCommand(sink: CommandSink, event: NotifyEvent, timeoutMs: number): Promise<string | undefined> {
  const [file, args] = typeof sink.command === 'string' ? ['/bin/sh', ['-c', sink.command]] : [sink.command[0] as string, sink.command.slice(1)];
  return new Promise((resolve) => {
    let settled = false;
    let stderr = '';
    const done = (problem: string | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(problem);
    };
    const child = spawn(file, args, { stdio: ['pipe', 'ignore', 'pipe'], detached: true });
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => {
      killGroup();
      done(`did not finish within ${timeoutMs} ms and was killed`);
    }, timeoutMs);
    child.on('error', (err) => done(`could not be started: ${err.message}`));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
    });
    child.on('close', (code, signal) => {
      // A program that exits but leaves children behind holding nothing of ours is fine; its group is killed anyway.
      killGroup();
      if (code === 0) done(undefined);
      else done(`exited with ${code !== null ? `code ${code}` : `signal ${signal}`}${stderr.trim() ? `: ${stderr.trim()}` : ''}`);
    });
    // A program that does not read its stdin closes the pipe: that is not a failure.
    child.stdin.on('error', () => undefined);
    child.stdin.end(`${JSON.stringify(event)}\n`);
  });
}
