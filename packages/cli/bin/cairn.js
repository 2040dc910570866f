#!/usr/bin/env node
// The `cairn` command. This file is committed, not built: `npm ci` links a workspace's bin only
// if its target exists, and in a fresh clone `npm ci` runs before the build has written `dist/`.
// Without the link, `npx cairn` would fall through to an unrelated package on the registry.
//
// It also turns an error thrown while Cairn's modules load, before the CLI can render errors
// (`CAIRN_NATIVE=1` without a native module, a missing build), into one line and exit 2.

function startupFailure(err) {
  const code = err && typeof err.code === 'string' ? err.code : '';
  if (code === 'ERR_MODULE_NOT_FOUND' && /dist[\\/]bin\.js/.test(String(err.message))) {
    return 'cairn: @cairn/cli is not built (no dist/bin.js). In the Cairn repository run `npm run build`.';
  }
  if (code.startsWith('CAIRN_')) return `cairn: ${err.message} [${code}]`;
  return null;
}

let reported = false;
function report(err) {
  const line = startupFailure(err);
  if (line === null) {
    process.stderr.write(`cairn: ${err && err.stack ? err.stack : String(err)}\n`);
    process.exit(1);
  }
  if (!reported) process.stderr.write(`${line}\n`);
  reported = true;
  process.exitCode = 2;
}

// Node 20 reports a CommonJS module that throws while an ES module imports it twice: as the
// rejection of the import below and as an uncaught exception. Both end here, printed once.
process.on('uncaughtException', report);
import('../dist/bin.js').then(() => process.off('uncaughtException', report), report);
