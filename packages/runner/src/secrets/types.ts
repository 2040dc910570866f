/**
 * Secret providers (types only): where the runner looks up the value of each `secret('NAME')`
 * a step declares, in order, the first that knows the name winning.
 */

/** The runner's own environment: `process.env[NAME]`. */
export interface EnvProvider {
  /** Kind. */
  readonly type: 'env';
  /** Looks up `prefix + NAME` instead (`CAIRN_SECRET_` → `CAIRN_SECRET_HF_TOKEN`). @default '' */
  readonly prefix?: string;
}

/**
 * A file of `NAME=value` lines (blank lines and `#` comments ignored; no quoting, no expansion).
 * It must be a regular file readable and writable by its owner only (mode 0600 or 0400), else it
 * is refused with `CAIRN_SECRET_FILE_MODE` and the fix (`chmod 600 FILE`).
 */
export interface FileProvider {
  /** Kind. */
  readonly type: 'file';
  /** The file's path (absolute, or relative to the runner's working directory). */
  readonly path: string;
}

/**
 * A program that prints a secret's value on stdout (`pass show`, `vault kv get -field=value`, a
 * cloud CLI): run without a shell with the secret's name as its last argument; exit 0 with
 * output resolves it (one trailing newline dropped), another exit leaves it to the next provider.
 */
export interface CommandProvider {
  /** Kind. */
  readonly type: 'command';
  /** The program and its first arguments, e.g. `['pass', 'show', 'cairn/']`... the name is appended as its own argument. */
  readonly command: readonly string[];
  /** The longest one look-up may take; then the program is killed and the next provider asked. @default 10000 */
  readonly timeoutMs?: number;
}

/** Where secret values come from. */
export type SecretProvider = EnvProvider | FileProvider | CommandProvider;

/** The runner's `secrets` option (and `cairn.config.ts`'s `secrets`). */
export interface SecretsOptions {
  /** Providers asked in order for each secret a step needs. @default [{ type: 'env' }] */
  readonly providers: readonly SecretProvider[];
}
