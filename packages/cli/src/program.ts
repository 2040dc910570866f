/**
 * The `cairn` command line: one commander program, one module per command. `main` maps
 * every outcome to an exit code (0 ok, 1 a step failed, 2 bad usage, 130 interrupted).
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import pc from 'picocolors';
import { cleanCommand } from './commands/clean.js';
import { configCommand } from './commands/config.js';
import { explainCommand } from './commands/explain.js';
import { graphCommand } from './commands/graph.js';
import { logsCommand } from './commands/logs.js';
import { planCommand } from './commands/plan.js';
import { reportCommand } from './commands/report.js';
import { runCommand } from './commands/run.js';
import { statusCommand } from './commands/status.js';
import { uiCommand } from './commands/ui.js';
import { unlockCommand } from './commands/unlock.js';
import { workerCommand } from './commands/worker.js';
import { parsePositiveInt } from './config.js';
import { collect, collectOptional } from './selection.js';
import { cliVersion } from './version.js';
import { colorEnabled, err, processContext, type CliContext } from './context.js';
import { ExitCode, exitCodeOf, formatError, usageError } from './errors.js';

function positiveInt(value: string): number {
  try {
    return parsePositiveInt(value, 'the value');
  } catch {
    throw new InvalidArgumentError('expected a positive integer.');
  }
}

function example(...texts: string[]): string {
  return `\nExample${texts.length > 1 ? 's' : ''}:\n${texts.map((t) => `  ${t}\n`).join('')}`;
}

/** Builds the program; `setExit` receives each command's exit code. */
export function createProgram(ctx: CliContext, setExit: (code: number) => void): Command {
  const program = new Command('cairn')
    .description('Run, inspect and clean Cairn pipelines (lazy, content-addressed steps).')
    // `--config FILE` names the config file; `--config` alone (explain) prints a step's config.
    .option('--config [file]', 'configuration file (default: nearest cairn.config.ts); `explain STEP PIPELINE --config` prints the config the step receives')
    .option('--verbose', 'show the cause chain and stacks of errors')
    .option('--no-color', 'disable colours (also: NO_COLOR=1)')
    .version(cliVersion(), '-V, --version', 'print the version of @cairn/cli')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => ctx.stdout.write(s),
      writeErr: (s) => ctx.stderr.write(s),
      // Commander's own usage errors (an unknown flag, a missing argument) carry the code every error carries.
      outputError: (s, write) => write(s.replace(/^(error: .*?)(\n|$)/, '$1 [CAIRN_USAGE]$2')),
    })
    .addHelpText('after', example('cairn run examples/pipeline.ts --prefix /tmp/store'))
    .hook('preAction', (root, command) => {
      const g = root.opts<{ config?: string | true; verbose?: boolean; color?: boolean }>();
      ctx.verbose = g.verbose === true;
      if (g.config === true && command.name() !== 'explain') throw usageError('--config needs a file: --config cairn.config.ts.', 'To see the config a step receives: cairn explain STEP PIPELINE --config');
      ctx.configFile = g.config === true ? undefined : g.config;
      ctx.showConfig = g.config === true;
      ctx.colors = pc.createColors(colorEnabled(ctx.stdout, ctx.env, g.color));
    });
  const done = (code: number) => setExit(code);

  program
    .command('run')
    .description('run a pipeline: skip what is cached, run the rest')
    .argument('<pipeline>', 'pipeline module exporting `targets` (.ts, .mts, .mjs, .js)')
    .argument('[targets...]', 'only these steps (by name or nameWithHash prefix) and what they need')
    .option('--dry-run', 'print the plan and run nothing')
    .option('--max-concurrent <n>', 'most steps running at once', positiveInt)
    .option('--executor <name>', 'executor for steps that name none')
    .option('--force-run-failed', 'rerun steps that failed in an earlier run (the default)')
    .option('--no-force-run-failed', 'report steps that failed in an earlier run instead of rerunning them')
    .option('--prefix <path>', 'store prefix (overrides CAIRN_PREFIX and the config file)')
    .option('--rebuild <step>', 'rerun this step and everything downstream of it, whatever is stored (repeatable)', collect)
    .option('--rebuild-all', 'rerun every step the targets need')
    .option('--accept-drift [step]', "serve this drifted step (a fixed path built from another recipe) as recorded; alone: every drifted step (repeatable)", collectOptional)
    .option('--json', 'stream events and step output as JSON lines')
    .option('--typecheck', "type-check the pipeline's project (tsc --noEmit) first; type errors stop the run (CAIRN_TYPECHECK)")
    .addHelpText('after', example('cairn run pipeline.ts train --prefix ./store --max-concurrent 4'))
    .action(async (file: string, targets: string[], o) => done(await runCommand(ctx, file, targets, o)));

  program
    .command('plan')
    .description('show what a run would do, step by step, and why (a dry run)')
    .argument('<pipeline>', 'pipeline module')
    .argument('[targets...]', 'only these steps (by name or nameWithHash prefix) and what they need')
    .option('--prefix <path>', 'store prefix')
    .option('--rebuild <step>', 'plan a rerun of this step and what is downstream of it (repeatable)', collect)
    .option('--rebuild-all', 'plan a rerun of every step the targets need')
    .option('--accept-drift [step]', 'plan serving this drifted step as recorded; alone: every drifted step (repeatable)', collectOptional)
    .option('--json', 'print JSON')
    .addHelpText('after', example('cairn plan pipeline.ts eval --prefix ./store'))
    .action(async (file: string, targets: string[], o) => done(await planCommand(ctx, file, targets, o)));

  program
    .command('status')
    .description('what the store holds, in DAG order: each step, its status, times, attempts, executor and lease; given a step, its whole record')
    .argument('[step]', 'one step (name, nameWithHash prefix or output path): print its record in full; a name means its newest build')
    .argument('[pipeline]', 'pipeline module: a step name means the build it references now')
    .option('--prefix <path>', 'store prefix')
    .option('--json', 'print JSON')
    .addHelpText('after', example('cairn status --prefix ./store   (or: cairn status train pipeline.ts --prefix ./store)'))
    .action(async (step: string | undefined, pipeline: string | undefined, o) => done(await statusCommand(ctx, { ...o, ...(pipeline !== undefined ? { pipeline } : {}) }, step)));

  program
    .command('logs')
    .description("print a step's logs (and, for a failed attempt, its error and stack)")
    .argument('<step>', 'step name (its newest build) or nameWithHash prefix')
    .argument('[pipeline]', 'pipeline module: a step name means the build it references now')
    .option('-f, --follow', 'keep printing while the step runs')
    .option('--attempt <n>', 'attempt number (default: the last)', positiveInt)
    .option('--prefix <path>', 'store prefix')
    .addHelpText('after', example('cairn logs train -f --prefix ./store'))
    .action(async (step: string, pipeline: string | undefined, o) => done(await logsCommand(ctx, step, { ...o, ...(pipeline !== undefined ? { pipeline } : {}) })));

  program
    .command('explain')
    .description('why a step is not cached: its hash inputs next to the recorded ones')
    .argument('<step>', 'step name or nameWithHash prefix')
    .argument('[pipeline]', 'pipeline module (to compare the current config with the store)')
    .option('--prefix <path>', 'store prefix')
    .option('--json', 'print JSON')
    .addHelpText('after', example('cairn explain tokenize pipeline.ts --prefix ./store', 'cairn explain model pipeline.ts --config   # the exact config it receives (paths resolved), running nothing'))
    .action(async (step: string, file: string | undefined, o) => done(await explainCommand(ctx, step, file, { ...o, config: ctx.showConfig })));

  program
    .command('graph')
    .description('draw the DAG as Graphviz dot, Mermaid or a self-contained HTML page')
    .argument('<pipeline>', 'pipeline module')
    .argument('[targets...]', 'only these steps and what they need')
    .addOption(new Option('--format <format>', 'output format').choices(['dot', 'mermaid', 'html']).default('dot'))
    .option('--out <file>', 'write to a file instead of stdout')
    .option('--prefix <path>', 'store prefix (colours nodes by plan state)')
    .option('--no-plan', 'do not read the store (all states unknown)')
    .option('--rebuild <step>', 'colour by a plan that reruns this step (repeatable)', collect)
    .option('--rebuild-all', 'colour by a plan that reruns everything')
    .option('--accept-drift [step]', 'colour by a plan that serves this drifted step (repeatable)', collectOptional)
    .addHelpText('after', example('cairn graph pipeline.ts --format html --out graph.html --prefix ./store'))
    .action(async (file: string, targets: string[], o) => done(await graphCommand(ctx, file, targets, o)));

  program
    .command('report')
    .description('one self-contained HTML page for the last run: timeline, each step\'s CPU time, peak memory and exit code, failures with errors and logs, cache hits')
    .option('--out <file>', 'output file (default: cairn-report.html, unless only --trace is given)')
    .option('--run <id>', 'the run to report (default: the newest)')
    .option('--trace <file>', "write each attempt's wall time, CPU, peak memory and GPU use as TSV (CSV for a .csv name), like Nextflow's trace")
    .option('--prefix <path>', 'store prefix')
    .addHelpText('after', example('cairn report --out report.html --prefix ./store', 'cairn report --trace trace.tsv'))
    .action(async (o) => done(await reportCommand(ctx, o)));

  program
    .command('clean')
    .description('remove failed or unreferenced outputs (lists them unless --yes)')
    .argument('[pipeline]', 'pipeline module: outputs it does not reference are unreferenced')
    .option('--yes', 'really delete')
    .option('--prefix <path>', 'store prefix')
    .option('--json', 'print JSON')
    .option('--keep-checkpoints', 'keep the checkpoint directories of the outputs removed (a rerun resumes from them)')
    .addHelpText('after', example('cairn clean pipeline.ts --prefix ./store --yes'))
    .action(async (file: string | undefined, o) => done(await cleanCommand(ctx, file, o)));

  program
    .command('ui')
    .description('a live web view of every run in the store: DAG with live states, step records, logs, usage, the trace')
    .option('--prefix <path>', 'store prefix')
    .option('--port <n>', 'port (0: any free one)', (v: string) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('a port number (0-65535)');
      return n;
    })
    .option('--host <address>', 'address to bind (anything but loopback needs a token)', '127.0.0.1')
    .option('--token <token>', 'token every request must carry (made and printed for non-loopback binds)')
    .option('--allow-actions', 'allow cancelling runs and unlocking stale leases from the page')
    .addHelpText('after', example('cairn ui --prefix ./store', 'cairn ui --prefix s3://bucket/runs --host 0.0.0.0 --port 8080'))
    .action(async (o) => done(await uiCommand(ctx, o)));

  program
    .command('unlock')
    .description('clear leases whose holder is dead')
    .option('--stale', 'clear leases whose holder is dead or whose heartbeat expired')
    .option('--prefix <path>', 'store prefix')
    .addHelpText('after', example('cairn unlock --stale --prefix ./store'))
    .action(async (o) => done(await unlockCommand(ctx, o)));

  program
    .command('worker')
    .description('run one task (the entry remote executors start)')
    .requiredOption('--task <file>', 'task file (msgpack)')
    .requiredOption('--result <file>', 'where to write the result (msgpack)')
    .addHelpText('after', example('cairn worker --task job/task.msgpack --result job/result.msgpack'))
    .action(async (o) => done(await workerCommand(ctx, o)));

  program
    .command('config')
    .description('print the effective configuration and where each value came from')
    .option('--prefix <path>', 'store prefix')
    .option('--max-concurrent <n>', 'most steps running at once', positiveInt)
    .option('--executor <name>', 'default executor')
    .option('--json', 'print JSON')
    .addHelpText('after', example('CAIRN_PREFIX=/data cairn config'))
    .action(async (o) => done(await configCommand(ctx, o)));

  return program;
}

/** Runs the CLI with `argv` (as `process.argv`); resolves with the exit code. */
export async function main(argv: readonly string[], ctx: CliContext = processContext()): Promise<number> {
  let code: number = ExitCode.ok;
  const program = createProgram(ctx, (c) => (code = c));
  try {
    await program.parseAsync([...argv]);
  } catch (e) {
    if (e instanceof CommanderError) {
      // Help and version are not errors; everything else commander rejects is bad usage.
      return e.exitCode === 0 || e.code === 'commander.helpDisplayed' || e.code === 'commander.version' ? ExitCode.ok : ExitCode.usage;
    }
    err(ctx, `${ctx.colors.red('cairn:')} ${formatError(e, ctx.verbose)}`);
    return exitCodeOf(e);
  }
  return code;
}
