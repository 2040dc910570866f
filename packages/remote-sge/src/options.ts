/** Options of {@link createSgeExecutor} (types only). */
import type { CommandRunner, GridExecutorOptions } from '@cairn/grid';

/**
 * Options of the Grid Engine executor: the grid core's (`pack`, `poll`, `nodePath`,
 * `workerEntry`, `walltimeGraceSeconds`…) and Grid Engine's own.
 */
export interface SgeExecutorOptions extends GridExecutorOptions {
  /** Runs `qsub`, `qstat`, `qacct`, `qdel` (e.g. `sshCommandRunner` to a login node). @default a local `execFile` runner with {@link env} */
  readonly exec?: CommandRunner;
  /** Environment of the local commands (`SGE_ROOT`, `SGE_CELL`, ports); ignored when `exec` is given. */
  readonly env?: Readonly<Record<string, string>>;
  /** Queue (`-q`); a step's `resources.hints.queue` wins. */
  readonly queue?: string;
  /** Project (`-P`); `resources.hints.project` wins. */
  readonly project?: string;
  /** Account string (`-A`); `resources.hints.account` wins. */
  readonly account?: string;
  /**
   * Parallel environment for steps with more than one CPU (`-pe <pe> <cpus>`), e.g. `smp`. Without
   * one, a step asking for more than one CPU is refused (Grid Engine would give it one slot).
   */
  readonly parallelEnvironment?: string;
  /**
   * The complex memory is requested with, per slot (`-l h_vmem=…`). `h_vmem` is a hard limit on
   * virtual memory, and Node reserves much more address space than it uses: below about 0.75 GB it
   * cannot start ("Failed to reserve virtual memory for CodeRange", exit 133). Give steps room, or
   * use a site's `mem_free`/`m_mem_free`; `null` requests no memory. @default 'h_vmem'
   */
  readonly memoryResource?: string | null;
  /** The consumable GPUs are requested with (`-l gpu=N`). @default 'gpu' */
  readonly gpuResource?: string;
  /** The complex a GPU type is requested with (`-l <it>=a100`); without it a typed GPU request is refused. */
  readonly gpuTypeResource?: string;
  /** Free-form extra `qsub` arguments, e.g. `['-l', 'scratch=10G']`. */
  readonly extraArgs?: readonly string[];
  /** Ask for accounting (`qacct`) about jobs that vanished without an exit-code file. @default true */
  readonly accounting?: boolean;
  /**
   * How long the accounting file may lag a job's end (the cell's `reporting_params`
   * `flush_time`, 15 s by default on a cluster). A job killed outside Cairn (qdel, h_rt) leaves
   * `qstat` before its record is written: the status check that sees it go waits this long, once
   * per job, so it reports the kill itself. `0` leaves it to later checks. @default 2000
   */
  readonly accountingDelayMs?: number;
  /** Let Grid Engine rerun a job after a host failure (`-r y`). Cairn retries lost jobs itself. @default false */
  readonly rerunnable?: boolean;
}
