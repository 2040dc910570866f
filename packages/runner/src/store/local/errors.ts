import { CairnError } from '@cairn/core';

/** A filesystem failure of the local store, naming what it was doing and where. */
export function storeError(what: string, path: string, cause: unknown): CairnError {
  const code = (cause as NodeJS.ErrnoException).code;
  const why = (cause as Error).message ?? String(cause);
  const hint =
    code === 'ENOSPC' ? 'The disk is full: free space, or choose another prefix.'
    : code === 'EROFS' || code === 'EACCES' || code === 'EPERM' ? 'Make the store writable (permissions, a read-only mount), or choose another prefix (--prefix or CAIRN_PREFIX).'
    : 'Check that the store prefix is a writable local directory.';
  return new CairnError('CAIRN_STORE', `Cannot ${what} ${path}: ${why}. ${hint}`, { cause });
}
