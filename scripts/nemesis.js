#!/usr/bin/env node
/**
 * A long nemesis run over a replicated group: `npm run nemesis -- --kills 100 [--seed N]
 * [--report f.json]`. Runs __tests__/replication/nemesis.test.ts under jest with these
 * figures and prints its summary: kills, tasks acknowledged, lost (must be 0), instances that
 * disagree (must be 0).
 */
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const args = process.argv.slice(2);
const env = { ...process.env, QUARRY_NEMESIS_VERBOSE: '1' };
for (let i = 0; i < args.length; i++) {
  const [flag, inline] = args[i].split('=', 2);
  const value = inline ?? args[++i];
  if (flag === '--kills') env.QUARRY_NEMESIS_KILLS = String(parseInt(value, 10));
  else if (flag === '--seed') env.QUARRY_NEMESIS_SEED = String(parseInt(value, 10));
  else if (flag === '--report') env.QUARRY_NEMESIS_REPORT = path.resolve(value);
  else {
    console.error(`unknown argument ${args[i]}; usage: npm run nemesis -- --kills N [--seed N] [--report file.json]`);
    process.exit(2);
  }
  if (value === undefined || (flag !== '--report' && Number.isNaN(parseInt(value, 10)))) {
    console.error(`${flag} needs a number`);
    process.exit(2);
  }
}
const root = path.join(__dirname, '..');
const fetched = spawnSync('bash', [path.join(root, 'scripts', 'fetch-nats.sh')], { stdio: 'inherit' });
if (fetched.status !== 0) process.exit(fetched.status ?? 1);
const jest = require.resolve('jest/bin/jest');
const r = spawnSync(process.execPath, [jest, '--runInBand', path.join('__tests__', 'replication', 'nemesis.test.ts')], {
  stdio: 'inherit',
  env,
  cwd: root,
});
process.exit(r.status ?? 1);
