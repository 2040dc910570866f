/**
 * The shell scripts run on remote hosts. Every script is a constant; the variable parts
 * (paths, pids, GPU lists) travel as positional arguments quoted by `shScript`, so no value
 * is ever parsed as shell code.
 *
 * Job directory layout (`<workDir>/jobs/<jobDirName>/`):
 *   task.msgpack    the task (written by the launch); `task.sh` for a command step
 *   secrets.sh      only while a step that needs secrets starts: `export NAME='value'` lines
 *                   (0600; sent on the launch's stdin, never an argument), sourced and deleted
 *                   by the wrapper before the step starts
 *   work/           a command step's working directory: its sources, staged (see command.ts)
 *   context.json, result.json  a command step's context and reported result ($CAIRN_CONTEXT, $CAIRN_RESULT)
 *   pid             the wrapper's pid = the job's process group and session id
 *   lock            flock'ed by every process of the job (the fd is inherited): a second
 *                   launch in the same dir finds it held and never starts beside it
 *   heartbeat       touched by every status check of a runner that tracks the job; the
 *                   wrapper's watchdog stops the job when it is older than the orphan grace
 *   watchdog        only when the watchdog stopped the job: why
 *   stdout.log, stderr.log
 *   result.msgpack  written by the worker entry
 *   usage.json      what the step used (wall, CPU, peak RSS, GPU), written by the worker entry or the command wrapper
 *   exit            the exit code, written atomically (tmp + mv): the truth about completion
 *   worker          only for steps run by the persistent worker: its directory. `pid` is
 *                   then the worker's pid (alive while the step may still finish)
 *   cancel          only for worker steps being cancelled: the grace in ms
 */
import { USAGE_FILE, USAGE_FILE_ENV, USAGE_SAMPLE_ENV, USAGE_SH_FUNCTIONS } from '@cairn/runner/executor';

/**
 * `verify FILE SHA256`: true when FILE is a regular file (not a link) whose SHA-256 is SHA256.
 * Code is always checked by content right before it runs, never by size: a same-size file
 * planted in its place must not run.
 */
const VERIFY_FN = 'verify() { [ -f "$1" ] && [ ! -L "$1" ] && h=$(sha256sum < "$1") && [ "${h%% *}" = "$2" ]; }';

/**
 * `galive PGID`: true when process group PGID has a member that is not a zombie (a container
 * whose init does not reap leaves a killed job's processes as zombies, which `kill -s 0` still
 * finds). `kill -s 0 --`, not `kill -0 --`: dash reads the latter's `--` as a pid and fails.
 */
const GROUP_ALIVE_FN = 'galive() { kill -s 0 -- "-$1" 2>/dev/null || return 1; g=$1; for f in /proc/[0-9]*/stat; do read -r l < "$f" 2>/dev/null || continue; l=${l##*) }; set -- $l; if [ "$3" = "$g" ] && [ "$1" != Z ]; then return 0; fi; done; return 1; }';

/** Exit code of the launch and worker scripts when a code bundle does not match its hash (re-upload, never run it). */
export const CODE_MISMATCH_EXIT = 5;

/**
 * Checks an uploaded bundle: `$1` file, `$2` its SHA-256, `$3` its directory (created). Prints
 * `ok` when the file is there with that content, else `stale` (upload it).
 */
export const CODE_CHECK_SCRIPT = [VERIFY_FN, 'mkdir -p -- "$3" || exit 3', 'if verify "$1" "$2"; then echo ok; else echo stale; fi'].join('\n');

/**
 * The job wrapper, run under `setsid` (a new session and process group). `$1` node,
 * `$2` worker entry, `$3` CUDA_VISIBLE_DEVICES, `$4` orphan grace (s), `$5` kill grace (s).
 * A TERM to the group reaches node and the wrapper; the trap keeps the wrapper alive so it
 * still records node's exit code.
 *
 * The watchdog (a subshell in the group, deaf to TERM so it outlives a cancel's TERM until the
 * exit file appears) looks for the exit file every second and, every grace/5 seconds (1 to 10),
 * at the age of `heartbeat`: measured against a file it touches itself (`now`), so both times
 * come from the same clock even when the work dir is on NFS. A runner tracking the job
 * touches it with every status check; a connection that drops only briefly, or a runner that
 * restarts and adopts the job, stays within the grace. Older than the grace, the runner is gone
 * for good: it writes `watchdog`, TERMs the group and KILLs it after the kill grace, so nothing
 * keeps running (or holding a GPU) for a runner that will never collect it. Its sleeps close
 * fd 9 (the job's lock), so the lock is free as soon as the job's own processes are gone.
 */
function wrapperScript(run: string, measured = false): string {
  return [
    ...(measured ? [USAGE_SH_FUNCTIONS, 'cairn_ustart "$PWD/usage.state"'] : []),
    // One write(2) of a few bytes: a reader sees the file empty (it waits: `-s`) or whole.
    'echo $$ > pid',
    "trap ':' TERM INT HUP",
    'g="$4"; k="$5"; pg=$$',
    '( trap "" TERM INT HUP',
    '  c=$((g / 5)); [ "$c" -lt 1 ] && c=1; [ "$c" -gt 10 ] && c=10; n=0',
    '  while [ ! -f exit ]; do',
    '    sleep 1 9>&-',
    '    n=$((n+1)); [ "$n" -lt "$c" ] && continue; n=0',
    '    touch now; a=$(( $(stat -c %Y now 2>/dev/null || date +%s) - $(stat -c %Y heartbeat 2>/dev/null || echo 0) ))',
    '    if [ "$a" -gt "$g" ] && [ ! -f exit ]; then',
    '      echo "no runner for ${a} s (the heartbeat is older than the orphan grace of ${g} s): stopping the job" > watchdog',
    '      kill -s TERM -- "-$pg" 2>/dev/null',
    '      i=0; while [ ! -f exit ] && [ "$i" -lt "$k" ]; do sleep 1 9>&-; i=$((i+1)); done',
    '      [ -f exit ] || kill -s KILL -- "-$pg" 2>/dev/null',
    '      exit 0',
    '    fi',
    '  done ) </dev/null >/dev/null 2>&1 &',
    // `.` is a builtin: no value is ever an argument `ps` shows. Gone before the step starts.
    'if [ -f secrets.sh ]; then . ./secrets.sh; rm -f secrets.sh; fi',
    ...(measured
      ? [
          // In the background so the sampler knows its pid; a TERM the wrapper traps interrupts `wait`, not the program.
          `${run} </dev/null >stdout.log 2>stderr.log &`,
          'c=$!',
          'cairn_uloop "$c" "$PWD/usage.state" </dev/null >/dev/null 2>&1 9>&- &',
          'u=$!',
          'while :; do wait "$c"; rc=$?; kill -0 "$c" 2>/dev/null || break; done',
          'kill "$u" 2>/dev/null',
          'cairn_uwrite "$PWD/usage.json" "$PWD/usage.state" ssh "$rc"',
        ]
      : [`${run} </dev/null >stdout.log 2>stderr.log`, 'rc=$?']),
    "printf '%s\\n' \"$rc\" > exit.tmp && mv -f exit.tmp exit",
  ].join('\n');
}

/**
 * The wrapper of a step run by Node: the worker entry reads the task and writes `result.msgpack`,
 * and measures its own process tree into `usage.json` (runner worker/self-usage.ts), which the
 * executor copies back next to the attempt's other files.
 */
export const WRAPPER_SCRIPT = wrapperScript(`CUDA_VISIBLE_DEVICES="$3" ${USAGE_SAMPLE_ENV}=ssh ${USAGE_FILE_ENV}="$PWD/${USAGE_FILE}" "$1" "$2" --task task.msgpack --result result.msgpack`);

/**
 * The wrapper of a command step (no Node on the host): the task is a shell script (`task.sh`,
 * see command.ts) that stages the step's sources, writes its context file and `exec`s the
 * program, so the program itself is what the group's TERM reaches. It is sourced in a subshell
 * (a fork, no new shell to start: command.bench.mjs, "ssh" row), whose traps are the defaults.
 * `$1` and `$2` are unused. The program runs in the background beside a sampler of its process
 * tree (runner usage/usage-sh.ts: CPU from `times`, peak RSS and GPU sampled every second), and
 * `usage.json` is written before `exit`. (An asynchronous command of a non-interactive shell
 * ignores SIGINT: a cancel sends TERM.)
 */
export const COMMAND_WRAPPER_SCRIPT = wrapperScript('( CUDA_VISIBLE_DEVICES="$3"; export CUDA_VISIBLE_DEVICES; . ./task.sh )', true);

/** Exit code of the launch when the job dir already runs a live copy (it prints `same <pid>` or `busy <pid>`). */
export const JOB_BUSY_EXIT = 6;

/**
 * Launches a detached job. `$1` job dir, `$2` wrapper script, then what `head` reads (the code
 * to verify), then the wrapper's arguments (node, worker entry, CUDA devices, orphan grace,
 * kill grace). Verifies the code by content (exit
 * {@link CODE_MISMATCH_EXIT} when one does not match: nothing runs), reads from stdin the step's
 * secrets (a line with their file's length, 0 for none, then the file: see {@link launchInput}) and the task,
 * takes the job dir's lock (held on by the wrapper and everything it starts: the fd is
 * inherited) and, when a live copy holds it or its process group still has members (3 s after
 * its exit file, for one that has ended), exits {@link JOB_BUSY_EXIT} printing `same <pid>` (that copy runs this very task and has not
 * ended: adopt it) or `busy <pid>` (another task, or what is left of an ended one: refuse). Otherwise starts the wrapper with `setsid` detached from
 * the SSH session, waits for its pid file and prints the pid.
 */
function launchScript(head: readonly string[], taskFile: string, started: readonly string[] = [], after: readonly string[] = []): string {
  return [
    'set -e',
    VERIFY_FN,
    ...head,
    'cd "$d"',
    // stdin: the secrets file's length in bytes on a line (0: none), the file, then the task.
    'read -r n',
    'if [ "$n" -gt 0 ]; then head -c "$n" > secrets.new; fi',
    `cat > ${taskFile}.new`,
    'exec 9>>lock',
    // Builtins where a fresh job dir needs no process (each fork+exec costs milliseconds on a loaded host).
    'old=0; if [ -f pid ]; then old=$(cat pid 2>/dev/null || echo 0); fi; case "$old" in ""|*[!0-9]*) old=0;; esac',
    // (a persistent worker's pid is its own: its step is live while it has not written `exit`)
    GROUP_ALIVE_FN,
    'busy() { ! flock -n 9 || { [ "$old" -gt 0 ] && if [ -f worker ]; then [ ! -f exit ] && kill -0 "$old" 2>/dev/null; else galive "$old"; fi; }; }',
    // A copy that has ended (its exit file written; its watchdog notices within a second) gets 3 s to go.
    'i=0; while [ -f exit ] && busy && [ "$i" -lt 30 ]; do sleep 0.1; i=$((i+1)); done',
    'if busy; then',
    `  if [ ! -f exit ] && cmp -s ${taskFile}.new ${taskFile}; then echo "same $old"; else echo "busy $old"; fi`,
    `  rm -f ${taskFile}.new secrets.new`,
    '  exit 6',
    'fi',
    `mv -f ${taskFile}.new ${taskFile}`,
    'for x in pid exit result.msgpack result.json usage.json usage.state watchdog worker cancel secrets.sh; do if [ -e "$x" ]; then rm -f "$x"; fi; done',
    'if [ -f secrets.new ]; then mv -f secrets.new secrets.sh; fi',
    ': > heartbeat',
    'setsid sh -c "$w" cairn-job "$@" </dev/null >/dev/null 2>&1 &',
    'exec 9>&-',
    ...started,
    'i=0',
    'while [ ! -s pid ]; do i=$((i+1)); if [ "$i" -gt 5000 ]; then echo "job did not start" >&2; exit 3; fi; sleep 0.002; done',
    'read -r p < pid; echo "$p"',
    ...after,
  ].join('\n');
}

/** What a launch reads on stdin: the secrets file (`secrets`, empty for none) behind its length, then the task. */
export function launchInput(secrets: string, task: Uint8Array): Buffer {
  const file = Buffer.from(secrets);
  return Buffer.concat([Buffer.from(`${file.length}\n`), file, task]);
}

/** Launches a step run by Node: `$3` the step bundle, `$4` its SHA-256, `$5` the worker entry's SHA-256. */
export const LAUNCH_SCRIPT = launchScript(
  [
    'd="$1"; w="$2"; code="$3"; codesum="$4"; entrysum="$5"; shift 5',
    'mkdir -p "$d"',
    'verify "$code" "$codesum" || { echo "$code does not match its SHA-256 $codesum: not running it" >&2; exit 5; }',
    'verify "$2" "$entrysum" || { echo "$2 does not match its SHA-256 $entrysum: not running it" >&2; exit 5; }',
  ],
  'task.msgpack',
);

/** The largest log or result file a quick exit prints inline (larger ones are read back as usual). */
export const QUICK_INLINE_BYTES = 64 * 1024;

/**
 * Launches a command step: `$3` how long to wait for a quick exit (seconds, `0`: not at all),
 * `$4` the output dir to create (absolute, or empty), then pairs of a
 * staged source and its SHA-256 (each verified by content, exit {@link CODE_MISMATCH_EXIT} when
 * one does not match: nothing runs), then `--`, then the wrapper's arguments. The task on stdin
 * is `task.sh`. After the pid, a job that ended within the wait prints its end in the same exec
 * (what a status check and the reads of its logs and result would fetch): `E <code>`, three
 * lines `F <base64>` (stdout.log, stderr.log, result.json; `F -` for a missing file, `F +` for
 * one over {@link QUICK_INLINE_BYTES}), and `O empty` when its `out` dir is empty (else `O -`).
 */
export const COMMAND_LAUNCH_SCRIPT = launchScript(
  [
    'd="$1"; w="$2"; qw="$3"; o="$4"; shift 4',
    'while [ "$#" -gt 1 ] && [ "$1" != -- ]; do verify "$1" "$2" || { echo "$1 does not match its SHA-256 $2: not running it" >&2; exit 5; }; shift 2; done',
    'shift',
    'mkdir -p -- "$d/work" ${o:+"$o"}',
  ],
  'task.sh',
  [
    // Waits for the wrapper (this shell's child: setsid execs it) for at most $qw seconds.
    'j=$!',
    'if [ "$qw" != 0 ]; then',
    '  trap ":" ALRM',
    '  ( sleep "$qw"; kill -s ALRM $$ ) </dev/null >/dev/null 2>&1 &',
    '  t=$!',
    '  wait "$j" || :',
    '  kill "$t" 2>/dev/null || :',
    'fi',
  ],
  [
    '[ -f exit ] || exit 0',
    'read -r rc < exit; echo "E $rc"',
    `for f in stdout.log stderr.log result.json; do if [ ! -f "$f" ]; then echo "F -"; elif [ ! -s "$f" ]; then echo "F "; elif [ "$(stat -c %s "$f")" -le ${QUICK_INLINE_BYTES} ]; then printf "F "; base64 -w0 < "$f"; echo; else echo "F +"; fi; done`,
    'o=empty; for e in out/* out/.[!.]* out/..?*; do if [ -e "$e" ] || [ -L "$e" ]; then o=-; fi; done; echo "O $o"',
  ],
);

/** What {@link COMMAND_LAUNCH_SCRIPT} printed after the pid of a job that ended within its wait; undefined when it had not ended, or a file was too large to inline. */
export function parseQuickExit(lines: readonly string[]): { code: number; stdout: Buffer; stderr: Buffer; result: Buffer | null; outEmpty: boolean } | undefined {
  const [e, out, err, result, o] = lines;
  if (!e?.startsWith('E ') || [out, err, result].some((l) => l === undefined || !l.startsWith('F') || l === 'F +') || !o?.startsWith('O ')) return undefined;
  const code = Number.parseInt(e.slice(2), 10);
  if (!Number.isInteger(code)) return undefined;
  const file = (l: string) => (l === 'F -' ? null : Buffer.from(l.slice(2), 'base64'));
  return { code, stdout: file(out as string) ?? Buffer.alloc(0), stderr: file(err as string) ?? Buffer.alloc(0), result: file(result as string), outEmpty: o === 'O empty' };
}

/** At most this many new log bytes per file per status check (the rest comes with the next). */
export const LOG_CHUNK_BYTES = 256 * 1024;

/**
 * One batched status check. Arguments: directories to remove (finished jobs' staged data),
 * then `--`, then per job three: its dir and the offsets already copied of its `stdout.log` and
 * `stderr.log` (`-` for no logs). For each job prints one line:
 * `E <code>` (exit file present), `R` (running), `G` (pid file but process gone, no exit
 * file: killed hard or host rebooted) or `N` (no such job / not started); then, when offsets
 * were given, two lines `L <base64>`: the bytes of each log past its offset (at most
 * {@link LOG_CHUNK_BYTES}). The exit file is re-read after the liveness check to close the race
 * with a job ending; logs are read after the state, so an exited job's chunk is its last bytes.
 * A running job's `heartbeat` is touched (see the wrapper's watchdog).
 */
export const STATUS_SCRIPT = [
  // A zombie (exited, not yet reaped: containers whose init does not reap) counts as gone.
  'alive() { kill -0 "$1" 2>/dev/null || return 1; s=$(sed "s/.*) //" "/proc/$1/stat" 2>/dev/null | cut -c1); [ "$s" != Z ]; }',
  `chunk() { s=$(stat -c %s "$1" 2>/dev/null || echo 0); n=$((s - $2)); [ "$n" -gt ${LOG_CHUNK_BYTES} ] && n=${LOG_CHUNK_BYTES}; if [ "$n" -gt 0 ]; then printf 'L '; tail -c +$(($2 + 1)) "$1" | head -c "$n" | base64 -w0; echo; else echo L; fi; }`,
  'while [ "$#" -gt 0 ] && [ "$1" != -- ]; do rm -rf -- "$1"; shift; done',
  'shift',
  'while [ "$#" -ge 3 ]; do',
  '  d="$1"; o="$2"; e="$3"; shift 3',
  '  if [ -f "$d/exit" ]; then echo "E $(cat "$d/exit")"',
  '  elif [ -s "$d/pid" ] && alive "$(cat "$d/pid")"; then echo R; touch "$d/heartbeat" 2>/dev/null',
  '  elif [ -f "$d/exit" ]; then echo "E $(cat "$d/exit")"',
  '  elif [ -s "$d/pid" ]; then echo G',
  '  else echo N; fi',
  '  if [ "$o" != - ]; then chunk "$d/stdout.log" "$o"; chunk "$d/stderr.log" "$e"; fi',
  'done',
].join('\n');

/** Signals process groups: `$1` signal name, then pgids. Prints the pgids still alive afterwards. */
export const SIGNAL_SCRIPT = [GROUP_ALIVE_FN, 's="$1"; shift', 'for p in "$@"; do kill -s "$s" -- "-$p" 2>/dev/null || true; done', 'for p in "$@"; do if galive "$p"; then echo "$p"; fi; done'].join('\n');

/**
 * Cancels detached jobs: `$1` the kill grace in tenths of a second, then pgids. TERMs each
 * group, prints those still alive, and leaves a killer detached on the host (its own session)
 * that KILLs what is left of them after the grace: the KILL happens even when the runner is
 * gone by then. The killer checks every 0.1 s and ends as soon as the groups are gone.
 */
export const CANCEL_SCRIPT = [
  't="$1"; shift',
  'for p in "$@"; do kill -s TERM -- "-$p" 2>/dev/null || true; done',
  'left=""',
  GROUP_ALIVE_FN,
  'for p in "$@"; do if galive "$p"; then echo "$p"; left="$left $p"; fi; done',
  '[ -z "$left" ] && exit 0',
  `killer='${GROUP_ALIVE_FN}; t="$1"; shift; i=0; while [ "$i" -lt "$t" ]; do any=; for p in "$@"; do galive "$p" && any=1; done; [ -z "$any" ] && exit 0; sleep 0.1; i=$((i+1)); done; for p in "$@"; do kill -s KILL -- "-$p" 2>/dev/null; done'`,
  'setsid sh -c "$killer" cairn-killer "$t" $left </dev/null >/dev/null 2>&1 &',
  'exit 0',
].join('\n');

/** Prints the pgids (arguments) still alive. */
export const ALIVE_SCRIPT = [GROUP_ALIVE_FN, 'for p in "$@"; do if galive "$p"; then echo "$p"; fi; done'].join('\n');

/**
 * For each file argument prints `<size> <sha256>`; reading through stdin keeps odd file
 * names (newlines, backslashes) out of the output. A missing file prints `- -`.
 */
export const MANIFEST_SCRIPT = [
  'for f in "$@"; do',
  '  if [ -f "$f" ]; then s=$(wc -c < "$f"); h=$(sha256sum < "$f"); echo "$s ${h%% *}"',
  '  else echo "- -"; fi',
  'done',
].join('\n');

/** Last bytes of a file: `$1` byte count, `$2` file. */
export const TAIL_SCRIPT = '[ -f "$2" ] && tail -c "$1" "$2" || true';

/**
 * Streams the job's logs until it ends: `$1` pid, `$2` stdout log, `$3` stderr log, `$4` exit
 * file. The job has ended when its exit file exists or the pid is gone (a worker step's pid is
 * the long-lived worker's, so the exit file is what ends it). tail then gets half a second to
 * print the last lines (it polls every 0.2 s).
 */
export const FOLLOW_SCRIPT = [
  'alive() { kill -0 "$1" 2>/dev/null || return 1; s=$(sed "s/.*) //" "/proc/$1/stat" 2>/dev/null | cut -c1); [ "$s" != Z ]; }',
  'tail -n +1 -q -F -s 0.2 "$2" "$3" 2>/dev/null &',
  't=$!',
  'while [ ! -f "$4" ] && alive "$1"; do sleep 0.2; done',
  'sleep 0.5',
  'kill "$t" 2>/dev/null',
  'wait',
].join('\n');

/**
 * Ensures the persistent worker runs and connects to it: `$1` worker dir, `$2` node, `$3` worker
 * bundle, `$4` idle ms, `$5` the bundle's SHA-256. Verifies the bundle by content first (exit
 * {@link CODE_MISMATCH_EXIT} when it does not match: neither the worker nor the relay runs it).
 * Under a lock (so two executors never start two workers), starts `node bundle serve` with
 * `setsid` in a subshell (re-parented to init, outside the SSH session) unless a live one
 * answers, waits for its socket, then becomes the relay (`node bundle connect`) between this
 * channel and the worker. Exit 4: the worker did not start or exited at once (its log follows
 * on stderr).
 */
export const WORKER_SCRIPT = [
  VERIFY_FN,
  'd="$1"; node="$2"; entry="$3"; idle="$4"; entrysum="$5"',
  'verify "$entry" "$entrysum" || { echo "$entry does not match its SHA-256 $entrysum: not running it" >&2; exit 5; }',
  'mkdir -p "$d" && cd "$d" || exit 3',
  'running() { kill -0 "$1" 2>/dev/null || return 1; s=$(sed "s/.*) //" "/proc/$1/stat" 2>/dev/null | cut -c1); [ "$s" != Z ]; }',
  'alive() { [ -s pid ] && [ -S sock ] && running "$(cat pid)"; }',
  'exec 9>>lock',
  'flock -w 30 9 || { echo "cannot lock $d/lock" >&2; exit 3; }',
  'if ! alive; then',
  '  rm -f pid starting',
  '  ( setsid "$node" "$entry" serve "$idle" </dev/null >>worker.log 2>&1 9>&- & echo $! > starting )',
  '  i=0',
  '  while ! alive; do',
  '    i=$((i+1))',
  '    if [ "$i" -gt 1500 ] || ! running "$(cat starting)"; then echo "the worker did not start; the end of $d/worker.log:" >&2; tail -n 20 worker.log >&2; exit 4; fi',
  '    sleep 0.01',
  '  done',
  'fi',
  'exec 9>&-',
  'exec "$node" "$entry" connect',
].join('\n');

/**
 * Cancels worker steps: `$1` grace in ms, then job dirs. Writes each job's `cancel` file and
 * sends SIGUSR2 to its worker, only when the job has not ended and that pid still is a worker
 * (a recycled pid never gets the signal).
 */
export const WORKER_CANCEL_SCRIPT = [
  'g="$1"; shift',
  'for d in "$@"; do',
  '  [ -f "$d/exit" ] && continue',
  '  printf \'%s\\n\' "$g" > "$d/cancel.tmp" && mv -f "$d/cancel.tmp" "$d/cancel" || continue',
  '  p=$(cat "$d/pid" 2>/dev/null) || continue',
  '  if tr "\\0" " " < "/proc/$p/cmdline" 2>/dev/null | grep -q "ssh-worker.mjs serve"; then kill -USR2 "$p" 2>/dev/null; fi',
  'done',
].join('\n');

/** Prints both logs once. */
export const CAT_LOGS_SCRIPT = 'cat "$1" "$2" 2>/dev/null || true';

/** One parsed state line of {@link STATUS_SCRIPT}. */
export type RemoteJobState = { readonly kind: 'exited'; readonly code: number } | { readonly kind: 'running' } | { readonly kind: 'gone' } | { readonly kind: 'missing' };

/** New bytes of a job's two logs, as {@link STATUS_SCRIPT} printed them. */
export interface LogChunks {
  readonly stdout: Buffer;
  readonly stderr: Buffer;
}

/** Parses {@link STATUS_SCRIPT} output: one state per job, and its log chunks where `withLogs[i]`. */
export function parseStatus(stdout: string, count: number, withLogs: readonly boolean[] = []): { states: RemoteJobState[]; logs: (LogChunks | undefined)[] } {
  const lines = stdout.split('\n').filter((l) => l !== '');
  const states: RemoteJobState[] = [];
  const logs: (LogChunks | undefined)[] = [];
  let at = 0;
  const chunk = () => {
    const l = lines[at] ?? '';
    if (!l.startsWith('L')) return Buffer.alloc(0);
    at++;
    return Buffer.from(l.slice(2), 'base64');
  };
  for (let i = 0; i < count; i++) {
    const l = lines[at] ?? 'N';
    if (!l.startsWith('L')) at++;
    if (l.startsWith('E ')) {
      const code = Number.parseInt(l.slice(2), 10);
      states.push(Number.isFinite(code) ? { kind: 'exited', code } : { kind: 'gone' });
    } else if (l === 'R') states.push({ kind: 'running' });
    else if (l === 'G') states.push({ kind: 'gone' });
    else states.push({ kind: 'missing' });
    logs.push(withLogs[i] ? { stdout: chunk(), stderr: chunk() } : undefined);
  }
  return { states, logs };
}
