/** Start-up options that turn an experimental feature on: OR-ed with the stored flags. */
import { startTestServer, type TestServer } from '../helpers/server';

describe('experimental features from start-up options', () => {
  let on: TestServer;
  let off: TestServer;
  beforeAll(async () => {
    on = await startTestServer({ args: ['--experimental-contains-filter', '--experimental-legacy-search-default'] });
    off = await startTestServer();
  });
  afterAll(async () => {
    await on.close();
    await off.close();
  });

  it('when --experimental-contains-filter and --experimental-legacy-search-default are given, then GET /experimental-features shows them on', async () => {
    const r = await on.api('GET', '/experimental-features');
    expect([r.status, r.body.containsFilter, r.body.legacySearch]).toEqual([200, true, true]);
  });

  it('when they are not given, then the features stay off', async () => {
    const r = await off.api('GET', '/experimental-features');
    expect([r.status, r.body.containsFilter, r.body.legacySearch]).toEqual([200, false, false]);
  });
});
