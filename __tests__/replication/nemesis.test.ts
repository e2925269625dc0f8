/**
 * The nemesis (issue 67; see `nemesis.ts`), short: at least 10 SIGKILLs of NATS servers and
 * Quarry instances while writes go through all three instances. `npm run nemesis -- --kills
 * 100 [--seed N]` runs it at length and prints the report.
 */
import fs from 'node:fs';
import { natsServerBinary, SKIP_REASON as NATS_SKIP_REASON } from '../../scripts/nats-cluster';
import { runNemesis } from './nemesis';

const nats = natsServerBinary();
const suite = nats ? describe : describe.skip;
if (!nats) console.warn(`SKIPPED replication/nemesis.test.ts: ${NATS_SKIP_REASON}`);

const KILLS = Number(process.env.QUARRY_NEMESIS_KILLS ?? 10);
const SEED = Number(process.env.QUARRY_NEMESIS_SEED ?? 6767);

jest.setTimeout(Math.max(600_000, KILLS * 30_000));

suite('the nemesis', () => {
  test(`when ${KILLS} servers and instances are killed and paused while writes go on, then nothing acknowledged is lost and every instance agrees`, async () => {
    const lines: string[] = [];
    const report = await runNemesis({ kills: KILLS, seed: SEED, log: (l) => lines.push(l) });
    const summary = { ...report, lost: report.lost.length, disagreements: report.disagreements.length };
    if (process.env.QUARRY_NEMESIS_REPORT)
      fs.writeFileSync(process.env.QUARRY_NEMESIS_REPORT, JSON.stringify({ ...report, faults: lines }, null, 2));
    if (process.env.QUARRY_NEMESIS_VERBOSE || report.lost.length || report.disagreements.length)
      console.log(JSON.stringify(summary), '\n', lines.join('\n'), '\n', report.disagreements.slice(0, 20).join('\n'));
    expect(report.kills).toBeGreaterThanOrEqual(KILLS);
    expect(report.acknowledged).toBeGreaterThan(0);
    expect(report.lost).toEqual([]);
    expect(report.disagreements).toEqual([]);
  });
});
