/**
 * `cairn run`: runs a pipeline with live progress. Exit codes: 0 all succeeded, 1 some step
 * failed, 2 bad usage or a bad pipeline, 130 interrupted (Ctrl-C or SIGTERM: running steps are
 * cancelled first and record CANCELLED, releasing their leases, so a rerun resumes).
 */
import { CairnError, hasCode, isCairnError } from '@cairn/core';
import { uncaptured, type RunnerEvent, type StepFailure } from '@cairn/runner';
import { loadConfig } from '../config.js';
import { out, type CliContext } from '../context.js';
import { ExitCode } from '../errors.js';
import { makeRunner } from '../make-runner.js';
import { loadPipeline } from '../pipeline.js';
import { selection } from '../selection.js';
import { shortHash } from '../step-pick.js';
import { typecheckPipeline } from '../typecheck.js';
import { makePlan } from '../plan.js';
import { watchCancelRequest } from '../report/cancel-request.js';
import { formatDuration } from '../table.js';
import { Progress, type ProgressMode } from '../ui/progress.js';
import { printPlan } from './plan.js';

/** Options of `cairn run`. */
export interface RunCommandOptions {
  readonly dryRun?: boolean;
  readonly maxConcurrent?: number;
  readonly executor?: string;
  readonly forceRunFailed?: boolean;
  readonly prefix?: string;
  readonly json?: boolean;
  /** `--rebuild STEP` (repeatable). */
  readonly rebuild?: readonly string[];
  /** `--rebuild-all`. */
  readonly rebuildAll?: boolean;
  /** `--accept-drift [STEP]`. */
  readonly acceptDrift?: readonly string[] | boolean;
  /** `--typecheck`: `tsc --noEmit` on the pipeline's project first; its errors are `CAIRN_TYPECHECK`. */
  readonly typecheck?: boolean;
}

/** Lines of a failure's message shown after the run (a drift's diff and fixes fit; a huge message is cut). */
const MESSAGE_LINES = 12;

/** The message of a failure, its continuation lines indented under the step's name. */
function shortMessage(error: unknown): string {
  const lines = (error instanceof Error ? error.message : String(error)).split('\n');
  const shown = lines.slice(0, MESSAGE_LINES);
  if (lines.length > MESSAGE_LINES) shown.push(`… (${lines.length - MESSAGE_LINES} more lines: cairn status <step>)`);
  return shown.join('\n    ');
}

function firstLine(error: unknown): string {
  const m = error instanceof Error ? error.message : String(error);
  return m.split('\n')[0] as string;
}

/** Runs the pipeline; resolves with the exit code. */
export async function runCommand(ctx: CliContext, file: string, selectors: readonly string[], options: RunCommandOptions): Promise<number> {
  const { rebuild, rebuildAll, acceptDrift, typecheck, ...flags } = options;
  const config = await loadConfig({ config: ctx.configFile, ...flags }, ctx.env, ctx.cwd);
  if (typecheck === true) await typecheckPipeline(file, ctx.cwd);
  const pipeline = await loadPipeline(file, ctx.cwd, config.layout);
  const { targets, options: chosen } = selection(pipeline, selectors, { rebuild, rebuildAll, acceptDrift });
  if (options.dryRun) {
    printPlan(ctx, await makePlan(pipeline, config, targets, chosen), options.json);
    return ExitCode.ok;
  }

  const mode: ProgressMode = options.json ? 'json' : ctx.stdout.isTTY ? 'tty' : 'plain';
  const c = ctx.colors;
  const logLine = (level: 'info' | 'warn' | 'error', message: string) => {
    if (mode === 'json') uncaptured(() => out(ctx, JSON.stringify({ type: 'log', level, message, time: Date.now() })));
    // Step failures arrive as events too; the runner's error lines repeat them (shown with --verbose).
    else if (level === 'warn' || (level === 'error' && ctx.verbose)) progress.note(`${level === 'warn' ? c.yellow('warning') : c.red('error')} ${message}`);
  };
  const runner = makeRunner(config, { logger: { info: (m) => logLine('info', m), warn: (m) => logLine('warn', m), error: (m) => logLine('error', m) } });
  // Each step's short hash beside its name: what `cairn logs`/`status` take to pick one build.
  const hashes = new Map(pipeline.specs.map((s) => [s.outputPath(runner.prefix()), shortHash(s.nameWithHash, s.name).slice(s.name.length + 1)]));
  // The display's own writes reach the terminal even when made inside a step's captured context (a nested run).
  const progress = new Progress({
    mode,
    write: (s) => uncaptured(() => void ctx.stdout.write(s)),
    colors: ctx.colors,
    columns: () => ctx.stdout.columns ?? 100,
    showOutput: true,
    hashOf: (path) => hashes.get(path),
    mask: (line) => runner.maskSecrets(line),
  });
  const controller = new AbortController();
  let stopWatching = () => {};
  runner.on((event: RunnerEvent) => {
    if (event.type === 'run-started') {
      // `cairn ui --allow-actions` asks through the store; cancel as Ctrl-C does.
      stopWatching = watchCancelRequest(runner.prefix(), runner.store, event.runId, () => {
        progress.note(c.yellow('Cancel requested through the store (cairn ui): cancelling running steps.'));
        controller.abort(new CairnError('CAIRN_CANCELLED', `The run was cancelled from cairn ui (a cancel request in ${runner.prefix()}).`));
      });
    }
    progress.onEvent(event);
  });

  // Ctrl-C or SIGTERM (a job scheduler, `kill`, a container stop): cancel running steps (they
  // record CANCELLED and release their leases); a second signal exits at once.
  let interrupts = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    interrupts++;
    if (interrupts > 1) {
      progress.finish();
      process.exit(ExitCode.interrupted);
    }
    progress.note(c.yellow(`${signal === 'SIGINT' ? 'Interrupted' : `Got ${signal}`}: cancelling running steps (${signal === 'SIGINT' ? 'Ctrl-C' : 'a second signal'} again to exit at once).`));
    controller.abort(new CairnError('CAIRN_CANCELLED', `The run was interrupted (${signal}).`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const started = Date.now();
  let code: number;
  try {
    const summary = await runner.run(targets, {
      signal: controller.signal,
      handleSigint: false,
      forceRunFailed: config.forceRunFailed,
      maxConcurrent: config.maxConcurrent,
      ...chosen,
    });
    progress.finish();
    const counts = Object.entries(summary.counts).filter(([, n]) => (n ?? 0) > 0);
    if (mode === 'json') out(ctx, JSON.stringify({ type: 'summary', exitCode: 0, runId: summary.runId, counts: summary.counts }));
    else out(ctx, `${c.green('✓')} ${counts.map(([k, n]) => `${n} ${k}`).join(', ') || 'nothing to do'} in ${formatDuration(Date.now() - started)} (run ${summary.runId})`);
    code = ExitCode.ok;
  } catch (error) {
    progress.finish();
    if (hasCode(error, 'CAIRN_CANCELLED')) {
      code = ExitCode.interrupted;
      if (mode === 'json') out(ctx, JSON.stringify({ type: 'summary', exitCode: code, error: firstLine(error) }));
      else ctx.stderr.write(`${c.yellow('cancelled:')} ${firstLine(error)}\n`);
    } else if (hasCode(error, 'CAIRN_STEP_FAILED') && Array.isArray((error as { failures?: unknown }).failures)) {
      code = ExitCode.failed;
      const failures = (error as unknown as { failures: readonly StepFailure[] }).failures;
      if (mode === 'json') {
        out(ctx, JSON.stringify({ type: 'summary', exitCode: code, failures: failures.map((f) => ({ step: f.step, path: f.path, error: firstLine(f.error), code: isCairnError(f.error) ? f.error.code : undefined })) }));
      } else {
        ctx.stderr.write(`${c.red('✗')} ${failures.length} step(s) failed:\n`);
        // A previous failure's message (the runner's, for library users) is on the line above; say it in CLI terms.
        for (const f of failures) ctx.stderr.write(`  ${c.bold(f.step)}: ${hasCode(f.error, 'CAIRN_PREVIOUS_FAILURE') ? 'failed in an earlier run; not rerun (--no-force-run-failed)' : shortMessage(f.error)}\n`);
        const previous = failures.some((f) => hasCode(f.error, 'CAIRN_PREVIOUS_FAILURE'));
        const ran = failures.some((f) => !hasCode(f.error, 'CAIRN_PREVIOUS_FAILURE'));
        if (ran) ctx.stderr.write(`See a failed step's error and logs with \`cairn logs <step>\` (its whole record: \`cairn status <step>\`); fix the cause and rerun (finished steps are not run again).\n`);
        if (previous) ctx.stderr.write('Steps that failed before were not rerun: drop --no-force-run-failed (or pass --force-run-failed) to retry them.\n');
      }
    } else {
      throw error;
    }
  } finally {
    stopWatching();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  return code;
}
