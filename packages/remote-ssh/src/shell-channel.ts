/**
 * A host's persistent shell: one long-lived exec channel running {@link SHELL_SERVER_SCRIPT} (a
 * POSIX `sh` loop: no Node on the host), down which the executor sends the commands it would
 * otherwise run with `exec`, one at a time. Each exec costs the host a new sshd session (on this
 * project's test host most of a bare `exec('true')`); a command sent down the channel costs a
 * `base64 -d` of its stdin, the command itself and an `awk` that prints its answer. A detached
 * launch and a tick's status check go this way when the shell is idle (host-shell.ts `runOnHost`),
 * so a short command step costs about its own processes (bench row "SSH, one at a time" in
 * tools/bench/README.md, issue 29); anything else, or either while the shell is busy, is an exec
 * as before.
 *
 * Protocol (text lines). Request: `R <id> <n> <stdin>` then the command's `n` lines; `<stdin>` is
 * its stdin in base64, `-` for none. The server runs the command in a subshell with stdin, stdout
 * and stderr on files in a private directory (`mktemp -d` under the checked work dir), then
 * answers with its output lines, `o <line>`, its error lines, `e <line>` (one `awk`), and
 * `x <id> <exit code>`.
 * The output is text: lines come back each with a newline, and a NUL byte does not survive (the
 * launch scripts print lines of text and base64). The three files are emptied before the answer
 * (a launch's stdin carries the step's secrets). The server exits when its stdin closes.
 */
import { CairnError } from '@cairn/core';
import { StringDecoder } from 'node:string_decoder';
import type { ClientChannel } from 'ssh2';
import type { ExecResult, HostConnection } from './connection.js';
import { shScript } from './quote.js';

/** The server. `$1`: the directory to make its private scratch directory in. */
export const SHELL_SERVER_SCRIPT = [
  'command -v base64 >/dev/null || { echo "no base64 on this host" >&2; exit 4; }',
  'command -v awk >/dev/null || { echo "no awk on this host" >&2; exit 4; }',
  't=$(mktemp -d "$1/shell.XXXXXX") || exit 1',
  // Absolute: awk would take a relative operand such as `a=b/shell.x/out` for an assignment.
  'case "$t" in /*) ;; *) t="$PWD/$t" ;; esac',
  "trap 'rm -rf -- \"$t\"' EXIT",
  "trap 'exit 129' HUP",
  "trap 'exit 143' TERM",
  'echo "ready $$"',
  'while IFS=" " read -r k id n in; do',
  '  [ "$k" = R ] || exit 3',
  '  s=""; i=0',
  '  while [ "$i" -lt "$n" ]; do IFS= read -r l || exit 3; s="$s$l',
  '"; i=$((i + 1)); done',
  '  if [ "$in" = - ]; then : > "$t/in"; else printf "%s" "$in" | base64 -d > "$t/in" || exit 3; fi',
  '  ( eval "$s" ) < "$t/in" > "$t/out" 2> "$t/err"',
  '  rc=$?',
  // One awk for both files: sh's `read` takes a byte a system call, so a status check's 256 KiB
  // log chunk (one base64 line) took 0.17 s that way, 1.4 s under load; awk, under 10 ms.
  '  awk \'FNR == 1 { p = FILENAME == ARGV[1] ? "o " : "e " } { print p $0 }\' "$t/out" "$t/err"',
  // Emptied at once: a launch's stdin holds the step's secrets (as its job dir's secrets.sh does until the wrapper reads it).
  '  : > "$t/in"; : > "$t/out"; : > "$t/err"',
  '  printf "x %s %s\\n" "$id" "$rc"',
  'done',
].join('\n');

/** How long the server may take to say it is ready. */
const READY_TIMEOUT_MS = 30_000;

interface Pending {
  readonly id: number;
  readonly out: string[];
  readonly err: string[];
  readonly resolve: (r: ExecResult) => void;
  readonly reject: (err: Error) => void;
  readonly timer: NodeJS.Timeout;
}

export class ShellChannel {
  readonly #conn: HostConnection;
  readonly #channel: ClientChannel;
  #up = true;
  #next = 1;
  #pending: Pending | undefined;
  #rest = '';
  readonly #decoder = new StringDecoder('utf8');
  /** Called once when the channel closes (the executor opens another on next use). */
  onClose: () => void = () => {};

  private constructor(conn: HostConnection, channel: ClientChannel) {
    this.#conn = conn;
    this.#channel = channel;
  }

  /** Opens the host's shell, its scratch directory under `dir` (the checked work dir). */
  static async open(conn: HostConnection, dir: string): Promise<ShellChannel> {
    const { channel, release } = await conn.stream(shScript(SHELL_SERVER_SCRIPT, [dir]));
    return new Promise<ShellChannel>((resolve, reject) => {
      let shell: ShellChannel | undefined;
      let stderr = '';
      const fail = (why: string) => {
        clearTimeout(timer);
        reject(new CairnError('CAIRN_REMOTE', `SSH host "${conn.target.name}": the persistent shell in ${dir} did not start (${why}).${stderr.trim() ? ` Its output: ${stderr.trim()}` : ''}`, { retryable: true }));
        channel.close();
      };
      const timer = setTimeout(() => fail(`no answer within ${READY_TIMEOUT_MS} ms`), READY_TIMEOUT_MS);
      channel.stderr.on('data', (d: Buffer) => {
        stderr = (stderr + d.toString('utf8')).slice(-2000);
      });
      let first = '';
      channel.on('data', (d: Buffer) => {
        if (shell) {
          shell.#data(shell.#decoder.write(d));
          return;
        }
        first += d.toString('latin1');
        const nl = first.indexOf('\n');
        if (nl < 0) return;
        if (!/^ready \d+$/.test(first.slice(0, nl))) {
          fail(`it said ${JSON.stringify(first.slice(0, 200))}`);
          return;
        }
        clearTimeout(timer);
        shell = new ShellChannel(conn, channel);
        shell.#data(shell.#decoder.write(Buffer.from(first.slice(nl + 1), 'latin1')));
        resolve(shell);
      });
      channel.on('close', () => {
        release();
        if (!shell) fail('the channel closed');
        else shell.#closed(new Error(`the persistent shell's channel closed${stderr.trim() ? `: ${stderr.trim()}` : ''}`));
      });
    });
  }

  /** True until the channel closes, and while its connection is up. */
  get up(): boolean {
    return this.#up && this.#conn.connected;
  }

  /** A command is running: the next one would wait for it (callers exec instead). */
  get busy(): boolean {
    return this.#pending !== undefined;
  }

  /**
   * Runs `command` (what `exec` would run) with `stdin`, as `exec` does. Rejects when the shell
   * is busy or down, and past `timeoutMs` without an answer (the shell is then closed: it may
   * be stuck in the command).
   */
  run(command: string, stdin: Uint8Array | undefined, timeoutMs: number): Promise<ExecResult> {
    if (!this.up) return Promise.reject(this.#error(new Error('the persistent shell is closed')));
    if (this.#pending !== undefined) return Promise.reject(this.#error(new Error('the persistent shell is busy')));
    const id = this.#next++;
    const lines = command.split('\n');
    const input = stdin !== undefined && stdin.length > 0 ? Buffer.from(stdin).toString('base64') : '-';
    return new Promise<ExecResult>((resolve, reject) => {
      const timer = setTimeout(() => {
        // Down at once (sshd closes the channel only once the command ends): the server is killed,
        // the command itself runs on, as an exec's would.
        const channel = this.#channel;
        this.#closed(new Error(`no answer to a command within ${timeoutMs} ms`));
        channel.signal('KILL');
        channel.close();
      }, timeoutMs);
      this.#pending = { id, out: [], err: [], resolve, reject, timer };
      this.#channel.write(`R ${id} ${lines.length} ${input}\n${lines.join('\n')}\n`);
    });
  }

  /** Closes the channel (the server exits and removes its scratch directory). */
  close(): void {
    if (!this.#up) return;
    this.#channel.end();
    this.#channel.close();
  }

  #data(text: string): void {
    this.#rest += text;
    let nl: number;
    while ((nl = this.#rest.indexOf('\n')) >= 0) {
      const line = this.#rest.slice(0, nl);
      this.#rest = this.#rest.slice(nl + 1);
      const p = this.#pending;
      if (p === undefined) continue;
      if (line.startsWith('o ')) p.out.push(line.slice(2));
      else if (line.startsWith('e ')) p.err.push(line.slice(2));
      else if (line.startsWith('x ')) {
        const [id, rc] = line.slice(2).split(' ');
        if (Number(id) !== p.id) continue;
        clearTimeout(p.timer);
        this.#pending = undefined;
        const code = Number.parseInt(rc ?? '', 10);
        const text = (l: string[]) => (l.length === 0 ? '' : `${l.join('\n')}\n`);
        p.resolve({ code: Number.isInteger(code) ? code : null, stdout: Buffer.from(text(p.out)), stderr: text(p.err) });
      }
    }
  }
  /** The channel's end: the command waiting, if any, fails with `cause`. */
  #closed(cause: Error): void {
    if (!this.#up) return;
    this.#up = false;
    const p = this.#pending;
    this.#pending = undefined;
    if (p !== undefined) {
      clearTimeout(p.timer);
      p.reject(this.#error(cause));
    }
    this.onClose();
  }

  #error(cause: Error): CairnError {
    const t = this.#conn.target;
    return new CairnError('CAIRN_REMOTE', `SSH host "${t.name}" (${t.user}@${t.host}:${t.port}): ${cause.message}.`, { cause, retryable: true });
  }
}
