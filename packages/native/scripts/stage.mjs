#!/usr/bin/env node
// Stages @cairn/native and its platform packages for packing or publishing (README.md,
// "Releasing"). The workspace's package.json lists no optionalDependencies, because npm ci in
// the repository cannot resolve packages that are not published yet; the staged copy lists one
// per platform at this version, as a published @cairn/native must.
//
//   node scripts/stage.mjs --out DIR                  @cairn/native + the platforms whose binary exists
//   node scripts/stage.mjs --out DIR --binaries BIN   binaries named cairn-native.<triple>.node in BIN
//   node scripts/stage.mjs --out DIR --all            fail unless every platform has its binary (releases)
//   node scripts/stage.mjs --out DIR --pack           also `npm pack` each staged package into DIR
//
// Prints one JSON line: { packages: [{ name, dir, tarball? }], missing: [triple] }.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { aboveFloor } from './glibc.mjs';
import { platformFiles } from './platforms.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const license = join(root, '..', '..', 'LICENSE');
const { values } = parseArgs({
  options: {
    out: { type: 'string' },
    binaries: { type: 'string' },
    all: { type: 'boolean', default: false },
    pack: { type: 'boolean', default: false },
    'refuse-direct-pack': { type: 'boolean', default: false },
  },
});

if (values['refuse-direct-pack']) {
  // `prepack` of the workspace package: packing it as it is would publish no optional dependencies.
  console.error('@cairn/native: pack or publish it through `node packages/native/scripts/stage.mjs --out DIR --pack` (README.md, "Releasing").');
  process.exit(1);
}
if (!values.out) {
  console.error('usage: node scripts/stage.mjs --out DIR [--binaries DIR] [--all] [--pack]');
  process.exit(2);
}

const out = resolve(values.out);
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const generated = await platformFiles();
const { platforms } = (await import('../index.js')).default;

function stageDir(name) {
  const dir = join(out, name.replace('@cairn/', ''));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  copyFileSync(license, join(dir, 'LICENSE'));
  return dir;
}

const staged = [];
const missing = [];
for (const p of platforms) {
  const file = `cairn-native.${p.triple}.node`;
  const binary = join(values.binaries ? resolve(values.binaries) : root, file);
  if (!existsSync(binary)) {
    missing.push(p.triple);
    continue;
  }
  if (p.os === 'linux' && p.libc === 'glibc') {
    const above = aboveFloor(binary);
    if (above && above.length) {
      console.error(`@cairn/native: ${file} needs glibc symbols above the floor: ${above.map((a) => `${a.symbol}@GLIBC_${a.version}`).join(', ')}`);
      process.exit(1);
    }
  }
  const manifest = JSON.parse(generated[`npm/${p.triple}/package.json`]);
  const dir = stageDir(manifest.name);
  writeFileSync(join(dir, 'package.json'), generated[`npm/${p.triple}/package.json`]);
  writeFileSync(join(dir, 'README.md'), generated[`npm/${p.triple}/README.md`]);
  copyFileSync(binary, join(dir, file));
  staged.push({ name: manifest.name, dir });
}
if (values.all && missing.length) {
  console.error(`@cairn/native: no binary for ${missing.join(', ')} (expected cairn-native.<triple>.node in ${values.binaries ?? root})`);
  process.exit(1);
}

const main = stageDir(pkg.name);
for (const f of [...pkg.files, 'README.md']) copyFileSync(join(root, f), join(main, f));
const { scripts: _scripts, nx: _nx, ...published } = pkg;
published.optionalDependencies = Object.fromEntries(platforms.map((p) => [`@cairn/native-${p.triple}`, pkg.version]));
writeFileSync(join(main, 'package.json'), `${JSON.stringify(published, null, 2)}\n`);
staged.push({ name: pkg.name, dir: main });

if (values.pack) {
  for (const s of staged) {
    const r = spawnSync('npm', ['pack', '--json', '--pack-destination', out], { cwd: s.dir, encoding: 'utf8', shell: process.platform === 'win32' });
    if (r.status !== 0) {
      console.error(`npm pack ${s.name} failed:\n${r.stderr}`);
      process.exit(1);
    }
    s.tarball = join(out, JSON.parse(r.stdout)[0].filename);
  }
}
console.log(JSON.stringify({ packages: staged, missing }));
