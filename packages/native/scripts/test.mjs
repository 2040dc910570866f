#!/usr/bin/env node
// Runs `cargo test` (its output also saved for the repository's test summary) and then vitest.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const results = join(import.meta.dirname, '..', '..', '..', '.test-results');
mkdirSync(results, { recursive: true });
const cargo = spawnSync('cargo', ['test', '--release', '--locked'], { encoding: 'utf8' });
process.stdout.write(cargo.stdout ?? '');
process.stderr.write(cargo.stderr ?? '');
writeFileSync(join(results, 'native.cargo.txt'), `${cargo.stdout ?? ''}\n${cargo.stderr ?? ''}`);
if (cargo.error) {
  console.error(`@cairn/native: cannot run cargo (${cargo.error.message})`);
}
const vitest = spawnSync('npx', ['vitest', 'run'], { stdio: 'inherit' });
process.exit(cargo.status === 0 && vitest.status === 0 ? 0 : 1);
