// Step functions for the secret-delivery tests of the remote executors (re-imported by workers
// on the far side). Each is handed the secret HF_TOKEN, holds it while the test samples `ps`, and
// writes only its hash to its output.
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { defineStep } from '@cairn/core';

const sha = (s) => createHash('sha256').update(s).digest('hex');

/** Waits `holdMs`, writes the token's hash to `hash` in its output, returns it (and whether the worker's environment still holds the value). */
export const hashToken = defineStep(import.meta.url, 'hashToken', async ({ token, holdMs }, ctx) => {
  await sleep(holdMs ?? 1500);
  await writeFile(join(ctx.outputPath, 'hash'), `${sha(token)}\n`);
  return { hash: sha(token), envHasIt: Object.values(process.env).includes(token) };
});
