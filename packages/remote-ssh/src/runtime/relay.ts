/**
 * `ssh-worker.mjs connect`: the remote end of the worker channel. Pipes the SSH channel's
 * stdin/stdout to the worker's socket (`./sock`) and exits when either side closes, so the
 * channel closing never touches the worker, and the worker dying closes the channel (which is
 * how the executor learns of it at once).
 */
import { connect } from 'node:net';
import { RELAY_NO_WORKER } from './protocol.js';

export function relay(): void {
  const sock = connect('sock');
  sock.on('error', (err) => {
    process.stderr.write(`ssh-worker connect: ${err.message}\n`);
    process.exit(RELAY_NO_WORKER);
  });
  sock.on('close', () => process.exit(0));
  process.stdin.pipe(sock);
  sock.pipe(process.stdout);
}
