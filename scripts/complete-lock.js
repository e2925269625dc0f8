#!/usr/bin/env node
// Completes package-lock.json with the platform-specific optional packages
// that the registry we install from does not carry.
//
// Packages such as @swc/core or @napi-rs/cli list one optional dependency per
// platform. When the registry lacks the build for a platform we never run on,
// `npm install` leaves it out of the lock, and `npm ci` then refuses the lock
// as "out of sync". This script records each such package with the `os`,
// `cpu` and `libc` its name declares, so `npm ci` sees a complete lock and
// skips it as foreign to this platform. Run it after any change to the lock:
//
//   npm install --package-lock-only --ignore-scripts && node scripts/complete-lock.js
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const lockPath = path.join(__dirname, '..', 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(lockPath, 'utf8'));
const pkgs = lock.packages;

const OS = ['android', 'darwin', 'freebsd', 'linux', 'win32', 'openharmony', 'netbsd', 'openbsd', 'sunos', 'aix'];
const CPU = [
  ['arm64', 'arm64'],
  ['aarch64', 'arm64'],
  ['x64', 'x64'],
  ['ia32', 'ia32'],
  ['arm', 'arm'],
  ['ppc64', 'ppc64'],
  ['riscv64', 'riscv64'],
  ['s390x', 's390x'],
  ['loong64', 'loong64'],
  ['wasm32', 'wasm32'],
];

/** Platform fields from a name such as `@swc/core-linux-x64-musl`. */
function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const out = {};
  const os = parts.find((p) => OS.includes(p));
  if (os) out.os = [os];
  for (const [token, cpu] of CPU) {
    if (parts.includes(token)) {
      out.cpu = [cpu];
      break;
    }
  }
  if (os === 'linux') {
    if (parts.includes('musl')) out.libc = ['musl'];
    else if (parts.some((p) => p.startsWith('gnu'))) out.libc = ['glibc'];
  }
  return out;
}

/** Does the lock resolve `name` from the package at `from` (node resolution)? */
function resolves(from, name) {
  let dir = from;
  for (;;) {
    const candidate = dir ? `${dir}/node_modules/${name}` : `node_modules/${name}`;
    if (pkgs[candidate]) return true;
    if (!dir) return false;
    const idx = dir.lastIndexOf('/node_modules/');
    dir = idx >= 0 ? dir.slice(0, idx) : '';
  }
}

/** The lowest concrete version a spec names (`1.2.3`, `^1.2.3`, `~1.2.3`, `>=1.2.3`). */
function versionOf(spec) {
  const m = /(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)/.exec(spec);
  return m ? m[1] : null;
}

const overrides = pkgs['']?.overrides ?? {};
let added = 0;
for (const [loc, meta] of Object.entries(pkgs)) {
  const optional = meta.optionalDependencies;
  if (!optional) continue;
  for (const [name, spec] of Object.entries(optional)) {
    if (resolves(loc, name)) continue;
    const platform = platformOf(name);
    if (!platform.os && !platform.cpu) continue; // not a platform package: leave it to npm
    const version = versionOf(typeof overrides[name] === 'string' ? overrides[name] : spec);
    if (!version) continue;
    const key = `node_modules/${name}`;
    const entry = { version };
    if (meta.dev) entry.dev = true;
    entry.optional = true;
    Object.assign(entry, platform);
    pkgs[key] = entry;
    added += 1;
  }
}

// Keep the key order npm writes (sorted after the root), so diffs stay small.
const root = pkgs[''];
const sorted = { '': root };
for (const key of Object.keys(pkgs)
  .filter((k) => k !== '')
  .sort())
  sorted[key] = pkgs[key];
lock.packages = sorted;
fs.writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lock: added ${added} platform package(s)`);
