#!/usr/bin/env node
/**
 * The long form of the machine-fault tests (issue 71): `npm run faults -- [--rounds N] [--seed N]`.
 * Runs the damaged-files, full-disk and slow-client tests under jest, with N segment files
 * damaged at random places (the short form in `npm test` damages 2).
 */
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const args = process.argv.slice(2);
const env = { ...process.env, QUARRY_FAULTS_ROUNDS: '40' };
for (let i = 0; i < args.length; i++) {
  const [flag, inline] = args[i].split('=', 2);
  const value = inline ?? args[++i];
  const n = parseInt(value ?? '', 10);
  if (Number.isNaN(n) || (flag !== '--rounds' && flag !== '--seed')) {
    console.error(`unknown argument ${args[i]}; usage: npm run faults -- [--rounds N] [--seed N]`);
    process.exit(2);
  }
  env[flag === '--rounds' ? 'QUARRY_FAULTS_ROUNDS' : 'QUARRY_FAULTS_SEED'] = String(n);
}
const root = path.join(__dirname, '..');
const tests = [
  '__tests__/durability/damaged-files.test.ts',
  '__tests__/durability/full-disk.test.ts',
  '__tests__/hostile/slow-clients.test.ts',
];
const run = spawnSync(
  process.execPath,
  [path.join(root, 'node_modules', 'jest', 'bin', 'jest.js'), '--runInBand', ...tests],
  { cwd: root, env, stdio: 'inherit' },
);
process.exit(run.status ?? 1);
