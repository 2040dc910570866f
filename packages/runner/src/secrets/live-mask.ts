/**
 * What a tool shows of an attempt's log while the attempt may still run (`cairn logs`, the
 * `cairn ui` step page). Programs write their logs directly (a `process` worker's or a command
 * step's file descriptors, Slurm and SGE jobs), so those bytes are masked only when the attempt
 * ends. Until then a reader masks them itself, with the values it resolves from its own
 * providers for the secrets the step declares (attempt-names.ts), and when it cannot resolve one
 * (another user, a provider it lacks) it shows none of the attempt's lines: never raw.
 */
import { readSecretNames, type ReadText } from './attempt-names.js';
import { RunSecrets } from './resolver.js';
import type { SecretProvider } from './types.js';

/** How to show one attempt's log. */
export type LiveLogView =
  /** As it is: the step declares no secret, or the attempt's logs were masked when it ended. */
  | { readonly show: 'as-is' }
  /** With these values masked (`tailLogs`'s `mask`, or `maskText`). */
  | { readonly show: 'masked'; readonly values: readonly string[] }
  /** Not at all: this reader cannot resolve the step's secrets; `notice` (one line) says so. */
  | { readonly show: 'withheld'; readonly notice: string };

const AS_IS: LiveLogView = Object.freeze({ show: 'as-is' });

/** A secret no provider resolved is asked for again after this long (a command provider is not run on every poll). */
const RETRY_MISSING_MS = 60_000;

/** Decides {@link LiveLogView}s for one reader, resolving each secret once from its providers. */
export class LiveLogMasks {
  readonly #secrets: RunSecrets;
  /** When each unresolved secret was last looked up. */
  readonly #missing = new Map<string, number>();

  /** `providers`: the reader's (its `cairn.config.ts` `secrets.providers`); undefined: the environment. */
  constructor(providers: readonly SecretProvider[] | undefined) {
    this.#secrets = new RunSecrets(providers);
  }

  /** How to show attempt `attempt`'s log files `logs` (read with `read`: local files by default). */
  async viewOf(logs: { readonly stdout: string }, attempt: number, read?: ReadText): Promise<LiveLogView> {
    const names = await readSecretNames(logs, read);
    if (names === undefined || (names !== 'unreadable' && names.masked)) return AS_IS;
    const list = names === 'unreadable' ? [] : names.names;
    const values: string[] = [];
    const missing: string[] = [];
    for (const n of list) {
      const v = this.#value(n);
      if (v === undefined) missing.push(n);
      else values.push(v);
    }
    if (names !== 'unreadable' && missing.length === 0) return { show: 'masked', values };
    const which = names === 'unreadable' ? 'secrets (its list of them cannot be read)' : `secret${missing.length > 1 ? 's' : ''} ${missing.join(', ')}, which this reader's secrets.providers do not resolve`;
    return { show: 'withheld', notice: `(attempt ${attempt} is running with ${which}: its log is withheld here and shown, masked, once the attempt ends)` };
  }

  #value(name: string): string | undefined {
    const missed = this.#missing.get(name);
    if (missed !== undefined && Date.now() - missed < RETRY_MISSING_MS) return undefined;
    const v = this.#secrets.tryValue(name);
    if (v === undefined) this.#missing.set(name, Date.now());
    else this.#missing.delete(name);
    return v;
  }
}
