/**
 * How a worker process learns at once that the runner that started it died: the runner hands it
 * one end of a pipe (fd `CAIRN_PARENT_FD`) and keeps the other; when the runner's process ends,
 * for whatever reason (SIGKILL included), the kernel closes its end and this one reads EOF.
 */
import { Socket } from 'node:net';

/** The environment variable naming the pipe's fd in the worker. */
export const PARENT_FD_ENV = 'CAIRN_PARENT_FD';

/**
 * Calls `onGone` once, when the process that holds the other end of the pipe named by
 * `CAIRN_PARENT_FD` is gone. Does not keep the worker alive. False when there is no such pipe
 * (remote executors leave it unset: their jobs outlive a runner restart and are adopted).
 */
export function watchParent(onGone: () => void): boolean {
  const fd = Number(process.env[PARENT_FD_ENV]);
  if (!Number.isInteger(fd) || fd < 3) return false;
  let pipe: Socket;
  try {
    pipe = new Socket({ fd, readable: true, writable: false });
  } catch {
    return false;
  }
  let gone = false;
  const once = () => {
    if (gone) return;
    gone = true;
    onGone();
  };
  pipe.on('end', once);
  pipe.on('close', once);
  pipe.on('error', once);
  pipe.resume();
  pipe.unref();
  return true;
}
