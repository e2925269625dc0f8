#!/usr/bin/env node
/**
 * A longer hostile-input fuzz run: `npm run fuzz -- --requests 100000 [--seed N] [--report f.json]`.
 * Runs __tests__/hostile/fuzz.test.ts under jest with the request count and seed given here;
 * the summary (status counts, 5xx, unanswered requests, protected-index changes) is printed
 * and, with --report, written as JSON.
 */
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const args = process.argv.slice(2);
const env = { ...process.env };
for (let i = 0; i < args.length; i++) {
  const [flag, inline] = args[i].split('=', 2);
  const value = inline ?? args[++i];
  if (flag === '--requests') env.QUARRY_FUZZ_REQUESTS = String(parseInt(value, 10));
  else if (flag === '--seed') env.QUARRY_FUZZ_SEED = String(parseInt(value, 10));
  else if (flag === '--report') env.QUARRY_FUZZ_REPORT = path.resolve(value);
  else {
    console.error(`unknown argument ${args[i]}; usage: npm run fuzz -- --requests N [--seed N] [--report file.json]`);
    process.exit(2);
  }
  if (value === undefined || (flag !== '--report' && Number.isNaN(parseInt(value, 10)))) {
    console.error(`${flag} needs a number`);
    process.exit(2);
  }
}
const jest = require.resolve('jest/bin/jest');
const r = spawnSync(process.execPath, [jest, '--runInBand', path.join('__tests__', 'hostile', 'fuzz.test.ts')], {
  stdio: 'inherit',
  env,
  cwd: path.join(__dirname, '..'),
});
process.exit(r.status ?? 1);
