/**
 * Exit codes and error rendering. Every failure ends as one clear sentence that says what to
 * do; `--verbose` adds the cause chain (and stacks).
 */
import { CairnError, isCairnError, type CairnErrorCode } from '@cairn/core';

/** Process exit codes of every command. */
export const ExitCode = {
  /** Everything asked for succeeded. */
  ok: 0,
  /** Some step failed (or a store/remote problem stopped the run). */
  failed: 1,
  /** Bad usage, bad configuration or a pipeline that cannot be loaded or lowered. */
  usage: 2,
  /** Interrupted (Ctrl-C or SIGTERM) after running steps were cancelled. */
  interrupted: 130,
} as const;

/** One of {@link ExitCode}'s values. */
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** Codes that mean the user's input (flags, config, pipeline, a step or store asked for) is wrong: exit 2. */
const USAGE_CODES: ReadonlySet<CairnErrorCode> = new Set<CairnErrorCode>([
  'CAIRN_USAGE',
  'CAIRN_CONFIG',
  'CAIRN_PIPELINE_LOAD',
  'CAIRN_TYPECHECK',
  'CAIRN_NO_SUCH_STEP',
  'CAIRN_AMBIGUOUS_STEP',
  'CAIRN_NO_STORE',
  'CAIRN_NOT_A_STORE',
  'CAIRN_INVALID_PATH',
  'CAIRN_UNKNOWN_OPTION',
  'CAIRN_TOO_DEEP',
  'CAIRN_NO_LOGS',
  'CAIRN_INVALID_NAME',
  'CAIRN_INVALID_SPEC',
  'CAIRN_DUPLICATE_STEP',
  'CAIRN_BAD_DEPENDENCY',
  'CAIRN_MUTABLE_DEPENDENCY',
  'CAIRN_CANONICAL_VALUE',
  'CAIRN_GRAPH_CYCLE',
  'CAIRN_FINGERPRINT_MISMATCH',
  'CAIRN_FN_REF',
  'CAIRN_INLINE_FN_REMOTE',
  'CAIRN_EXECUTOR',
  'CAIRN_NATIVE_UNAVAILABLE',
  'CAIRN_NATIVE_MISSING',
]);

/** The exit code an error means. */
export function exitCodeOf(err: unknown): ExitCodeValue {
  if (isCairnError(err)) {
    if (err.code === 'CAIRN_CANCELLED') return ExitCode.interrupted;
    if (USAGE_CODES.has(err.code)) return ExitCode.usage;
  }
  return ExitCode.failed;
}

/** An error the CLI raises: `message` says what is wrong, `hint` what to do; the code says which kind. */
export function cliError(code: CairnErrorCode, message: string, hint: string, cause?: unknown): CairnError {
  return new CairnError(code, `${message} ${hint}`.trim(), cause === undefined ? {} : { cause });
}

/** A bad flag or argument (`CAIRN_USAGE`, exit 2). */
export function usageError(message: string, hint: string, cause?: unknown): CairnError {
  return cliError('CAIRN_USAGE', message, hint, cause);
}

/** Renders an error for the terminal: the message, then (verbose) each cause with its stack. */
export function formatError(err: unknown, verbose: boolean): string {
  const lines: string[] = [];
  const first = describe(err);
  lines.push(first.message);
  if (!verbose) {
    if (!isCairnError(err)) lines.push('(this looks like a bug in cairn; rerun with --verbose for the stack)');
    return lines.join('\n');
  }
  if (first.stack) lines.push(indent(first.stack));
  let cause = (err as { cause?: unknown } | null)?.cause;
  const seen = new Set<unknown>([err]);
  while (cause !== undefined && cause !== null && !seen.has(cause)) {
    seen.add(cause);
    const d = describe(cause);
    lines.push(`caused by: ${d.message}`);
    if (d.stack) lines.push(indent(d.stack));
    cause = (cause as { cause?: unknown }).cause;
  }
  return lines.join('\n');
}

function describe(err: unknown): { message: string; stack?: string } {
  if (err instanceof Error || (typeof err === 'object' && err !== null && 'message' in err)) {
    const e = err as { message: unknown; stack?: unknown; code?: unknown };
    const code = typeof e.code === 'string' ? ` [${e.code}]` : '';
    // The frames: what follows the message (which may span lines) in the stack.
    const lines = typeof e.stack === 'string' ? e.stack.split('\n') : [];
    const at = lines.findIndex((l) => /^\s+at /.test(l));
    const stack = at >= 0 ? lines.slice(at).join('\n') : undefined;
    // The code closes the first line (a message may go on with a code excerpt).
    const [head, ...rest] = String(e.message).split('\n');
    const message = [`${head}${code}`, ...rest].join('\n');
    return stack ? { message, stack } : { message };
  }
  return { message: String(err) };
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `    ${l.trim()}`)
    .join('\n');
}
