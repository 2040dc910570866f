#!/usr/bin/env node
// Sums every test project's results into the one line CI reads: "N passed, N failed".
// Sources: vitest JSON reports (.test-results/*.json), cargo test logs (.test-results/*.cargo.txt)
// and pytest JUnit reports (.test-results/*.junit.xml).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const dir = join(process.cwd(), '.test-results');
let passed = 0;
let failed = 0;
let skipped = 0;
const rows = [];
let files = [];
/** Names of the failed vitest tests and suites, printed under the totals (CI shows only the end of its log). */
const failures = [];
/** Lines of the `.retried.log` files (tools/scripts/retry-reporter.ts): tests that needed their CI retry. */
const retried = [];
try {
  files = readdirSync(dir).sort();
} catch {
  files = [];
}
for (const f of files) {
  if (!statSync(join(dir, f)).isFile()) continue;
  const text = readFileSync(join(dir, f), 'utf8');
  if (f.endsWith('.json')) {
    const r = JSON.parse(text);
    for (const file of r.testResults ?? []) {
      const where = String(file.name ?? '').replace(`${process.cwd()}/`, '');
      const bad = (file.assertionResults ?? []).filter((a) => a.status === 'failed');
      for (const a of bad) failures.push(`${where} > ${a.fullName ?? a.title}`);
      if (bad.length === 0 && file.status === 'failed') failures.push(`${where}: ${String(file.message ?? 'the file failed to run').split('\n')[0]}`);
    }
    const p = r.numPassedTests ?? 0;
    const x = (r.numFailedTests ?? 0) + (r.numRuntimeErrorTestSuites ?? 0) + (r.numFailedTestSuites && !r.numFailedTests ? r.numFailedTestSuites : 0);
    const s = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
    passed += p;
    failed += x;
    skipped += s;
    rows.push(`  ${f.replace(/\.json$/, '').padEnd(24)} ${String(p).padStart(5)} passed ${String(x).padStart(4)} failed ${String(s).padStart(4)} skipped`);
  } else if (f.endsWith('.retried.log')) {
    retried.push(...text.split('\n').filter(Boolean).map((l) => `${f.replace(/\.retried\.log$/, '')}: ${l}`));
  } else if (f.endsWith('.junit.xml')) {
    // pytest: sum the <testsuite> counters (tests include failures, errors and skips).
    let p = 0;
    let x = 0;
    let s = 0;
    for (const m of text.matchAll(/<testsuite\b([^>]*)>/g)) {
      const attr = (name) => Number(new RegExp(`\\b${name}="(\\d+)"`).exec(m[1])?.[1] ?? 0);
      const bad = attr('failures') + attr('errors');
      x += bad;
      s += attr('skipped');
      p += attr('tests') - bad - attr('skipped');
    }
    passed += p;
    failed += x;
    skipped += s;
    rows.push(`  ${f.replace(/\.junit\.xml$/, ' (pytest)').padEnd(24)} ${String(p).padStart(5)} passed ${String(x).padStart(4)} failed ${String(s).padStart(4)} skipped`);
  } else if (f.endsWith('.cargo.txt')) {
    let p = 0;
    let x = 0;
    for (const m of text.matchAll(/test result: \w+\. (\d+) passed; (\d+) failed/g)) {
      p += Number(m[1]);
      x += Number(m[2]);
    }
    passed += p;
    failed += x;
    rows.push(`  ${f.replace(/\.cargo\.txt$/, ' (cargo)').padEnd(24)} ${String(p).padStart(5)} passed ${String(x).padStart(4)} failed`);
  }
}
console.log('\nTest projects:');
for (const r of rows) console.log(r);
if (rows.length === 0) {
  console.log('  no test results found');
  failed += 1;
}
if (failures.length > 0) {
  console.log('\nFailed:');
  for (const f of failures) console.log(`  ${f}`);
}
if (retried.length > 0) {
  console.log('\nRetried (CI retries a failed test once; each of these is a flake to fix):');
  for (const r of retried) console.log(`  ${r}`);
}
console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 ? 1 : 0);
