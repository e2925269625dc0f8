#!/usr/bin/env node
// Keeps the platform packages in step with the main package's version.
//
// The main package `quarry-search` names one optional dependency per platform package
// (`npm/<platform>/package.json`, as `napi create-npm-dirs` writes them), all at its own
// version. `npm version <x.y.z>` runs the `version` script, `napi version && node
// scripts/sync-versions.js`: napi sets the version of every `npm/<platform>/package.json`, and
// this script sets the same version in the main package's `optionalDependencies` and in
// package-lock.json (the root entry and one entry per platform package, with that package's
// `os`/`cpu`/`libc`, so that `npm ci` sees a lock in step and skips the foreign platforms).
//
//   node scripts/sync-versions.js           write the version everywhere
//   node scripts/sync-versions.js --check   write nothing; exit 1 and list what is out of step
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const check = process.argv.includes('--check');

function readJson(file) {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}
/** Compares two name → version maps, whatever their key order. */
function sameMap(a, b) {
  const sortedEntries = (m) => JSON.stringify(Object.entries(m ?? {}).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
  return sortedEntries(a) === sortedEntries(b);
}
function writeJson(file, value) {
  fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

/** The platform packages of the main package, from its napi targets and `npm/`. */
function platformPackages(pkg) {
  const out = [];
  for (const dir of fs.readdirSync(path.join(root, 'npm')).sort()) {
    const file = path.join(root, 'npm', dir, 'package.json');
    if (!fs.existsSync(file)) continue;
    out.push({ dir, file, manifest: readJson(file) });
  }
  const expected = pkg.napi.targets.length;
  if (out.length !== expected) {
    throw new Error(
      `npm/ holds ${out.length} platform packages but napi.targets lists ${expected}: run \`npx napi create-npm-dirs\``,
    );
  }
  return out;
}

function main() {
  const pkgFile = path.join(root, 'package.json');
  const lockFile = path.join(root, 'package-lock.json');
  const pkg = readJson(pkgFile);
  const lock = readJson(lockFile);
  const version = pkg.version;
  const problems = [];
  const platforms = platformPackages(pkg);

  const optional = {};
  for (const { dir, manifest } of platforms) {
    if (manifest.name !== `${pkg.napi.packageName}-${dir}`) problems.push(`npm/${dir}: name ${manifest.name}`);
    if (manifest.version !== version) problems.push(`npm/${dir}: version ${manifest.version}, main package ${version}`);
    manifest.version = version;
    optional[manifest.name] = version;
  }
  if (!sameMap(pkg.optionalDependencies, optional)) {
    problems.push(`package.json optionalDependencies ${JSON.stringify(pkg.optionalDependencies ?? {})}`);
  }
  pkg.optionalDependencies = optional;

  const rootEntry = lock.packages[''];
  if (lock.version !== version || rootEntry.version !== version)
    problems.push(`package-lock.json: version ${rootEntry.version}`);
  if (!sameMap(rootEntry.optionalDependencies, optional)) {
    problems.push(
      `package-lock.json: root optionalDependencies ${JSON.stringify(rootEntry.optionalDependencies ?? {})}`,
    );
  }
  lock.version = version;
  rootEntry.version = version;
  // npm writes the root entry's fields in this order: keep it, so diffs stay small.
  const orderedRoot = {};
  for (const [key, value] of Object.entries(rootEntry)) {
    if (key === 'optionalDependencies') continue;
    orderedRoot[key] = value;
    if (key === 'dependencies') orderedRoot.optionalDependencies = optional;
  }
  if (!orderedRoot.optionalDependencies) orderedRoot.optionalDependencies = optional;
  lock.packages[''] = orderedRoot;

  for (const { manifest } of platforms) {
    const key = `node_modules/${manifest.name}`;
    const want = { version, optional: true };
    for (const field of ['os', 'cpu', 'libc']) if (manifest[field]) want[field] = manifest[field];
    const have = lock.packages[key];
    if (!have || have.version !== version)
      problems.push(`package-lock.json: ${key} ${have ? have.version : 'missing'}`);
    lock.packages[key] = have ? { ...have, ...want } : want;
  }
  const sorted = { '': lock.packages[''] };
  for (const key of Object.keys(lock.packages)
    .filter((k) => k !== '')
    .sort())
    sorted[key] = lock.packages[key];
  lock.packages = sorted;

  if (check) {
    if (problems.length > 0) {
      process.stderr.write(`sync-versions: out of step with ${version}:\n  ${problems.join('\n  ')}\n`);
      process.exit(1);
    }
    process.stdout.write(`sync-versions: ${platforms.length} platform packages at ${version}\n`);
    return;
  }
  for (const { file, manifest } of platforms) writeJson(file, manifest);
  writeJson(pkgFile, pkg);
  writeJson(lockFile, lock);
  process.stdout.write(
    `sync-versions: ${platforms.length} platform packages at ${version}${problems.length ? ` (fixed ${problems.length})` : ''}\n`,
  );
}

main();
