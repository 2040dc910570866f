import { CairnError, unpackValue, type CairnErrorCode } from '@cairn/core';

/** The worker entry's result file (`packValue` of `{ ok, result }` / `{ ok:false, error }`). */
export type RemoteResult = { readonly ok: true; readonly result: unknown } | { readonly ok: false; readonly error: { name: string; message: string; stack?: string; code?: string } };

/** Decodes a result file; corrupt bytes throw `CAIRN_CODEC_CORRUPT`. */
export function decodeRemoteResult(bytes: Uint8Array): RemoteResult {
  let r: unknown;
  try {
    r = unpackValue(bytes);
  } catch (cause) {
    throw new CairnError('CAIRN_CODEC_CORRUPT', 'Cannot decode a remote result file: invalid msgpack. Check the worker and runner use the same Cairn version.', { cause });
  }
  const o = r as { ok?: unknown; error?: { message?: unknown } };
  if (typeof r !== 'object' || r === null || (o.ok !== true && (o.ok !== false || typeof o.error?.message !== 'string'))) {
    throw new CairnError('CAIRN_CODEC_CORRUPT', 'Cannot decode a remote result file: unexpected shape. Check the worker and runner use the same Cairn version.');
  }
  return r as RemoteResult;
}

/** Rebuilds the far side's error: a CairnError when it was one, else an Error with its name, code and stack. */
export function rebuildRemoteError(data: { name: string; message: string; stack?: string; code?: string }, step: string): Error {
  let err: Error;
  if (data.name === 'CairnError' && data.code?.startsWith('CAIRN_')) err = new CairnError(data.code as CairnErrorCode, data.message, { step });
  else {
    err = new Error(data.message);
    err.name = data.name;
    if (data.code !== undefined) Object.assign(err, { code: data.code });
  }
  if (data.stack !== undefined) err.stack = data.stack;
  return err;
}
