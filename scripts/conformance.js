#!/usr/bin/env node
/**
 * The long form of the differential conformance harness:
 *   npm run conformance -- --requests 100000 --seed N [--families search,tokens] [--report f.json]
 * Starts Quarry and the reference Meilisearch 1.50 (../shared/bin/) in a loopback-only network
 * namespace, sends both the same generated requests and prints the difference classes, each
 * with its smallest reproducing request (__tests__/conformance/harness.js).
 */
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const r = spawnSync(
  process.execPath,
  [path.join(__dirname, '../__tests__/conformance/harness.js'), ...process.argv.slice(2)],
  { stdio: 'inherit' },
);
process.exit(r.status ?? 1);
