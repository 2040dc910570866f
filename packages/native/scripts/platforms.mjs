#!/usr/bin/env node
// Generates npm/<triple>/{package.json,README.md}, one package per prebuilt platform, from the
// loader's table (index.js, PLATFORMS) and this package's version and metadata.
//
//   node scripts/platforms.mjs           write them
//   node scripts/platforms.mjs --check   exit 1 if any is missing or differs (CI)
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));

/** The generated files as `{ path: text }`, paths relative to the package root. */
export async function platformFiles() {
  process.env.CAIRN_NATIVE = '0'; // only the table is wanted, not a binding
  const { platforms } = (await import('../index.js')).default;
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const files = {};
  for (const p of platforms) {
    const binary = `cairn-native.${p.triple}.node`;
    const manifest = {
      name: `@cairn/native-${p.triple}`,
      version: pkg.version,
      description: `The ${p.triple} binary of @cairn/native (${p.minimum}). Installed by @cairn/native as an optional dependency on this platform only.`,
      license: pkg.license,
      author: pkg.author,
      homepage: pkg.homepage,
      repository: pkg.repository,
      bugs: pkg.bugs,
      os: [p.os],
      cpu: [p.cpu],
      ...(p.libc ? { libc: [p.libc] } : {}),
      engines: pkg.engines,
      main: binary,
      files: [binary],
      publishConfig: pkg.publishConfig,
    };
    files[`npm/${p.triple}/package.json`] = `${JSON.stringify(manifest, null, 2)}\n`;
    files[`npm/${p.triple}/README.md`] =
      `# @cairn/native-${p.triple}\n\n` +
      `The prebuilt \`${p.triple}\` binary (Rust target \`${p.rustTarget}\`; needs ${p.minimum}) of ` +
      `[@cairn/native](https://www.npmjs.com/package/@cairn/native), Cairn's native hashing and graph kernels.\n\n` +
      `Do not install it directly: \`@cairn/native\` lists every platform package as an optional dependency, ` +
      `and npm installs the one matching this machine (\`os\`, \`cpu\`${p.libc ? ', `libc`' : ''}). ` +
      `Without it Cairn runs on its TypeScript fallback, with the same results. See ${pkg.homepage}.\n`;
  }
  return files;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  const stale = [];
  for (const [rel, text] of Object.entries(await platformFiles())) {
    const path = join(root, rel);
    const current = existsSync(path) ? readFileSync(path, 'utf8') : null;
    if (current === text) continue;
    if (check) stale.push(rel);
    else {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text);
      console.log(`wrote ${rel}`);
    }
  }
  if (stale.length) {
    console.error(`@cairn/native: platform packages out of date (${stale.join(', ')}); run node packages/native/scripts/platforms.mjs`);
    process.exit(1);
  }
}
