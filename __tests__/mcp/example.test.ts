/** The MCP example (`examples/mcp-agent/client.js`) run against a real Quarry, so it cannot rot. */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { MASTER_KEY, startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

const CLIENT = path.join(__dirname, '../../examples/mcp-agent/client.js');
const run = promisify(execFile);

let s: TestServer;
let uid: string;
beforeAll(async () => {
  s = await startTestServer({ args: ['--experimental-mcp'] });
  uid = uniqueIndex('mcp_example');
  await s.waitTask(
    (await s.api('PATCH', `/indexes/${uid}/settings`, { body: { filterableAttributes: ['year'] } })).body.taskUid,
  );
  const added = await s.waitTask(
    (
      await s.api('POST', `/indexes/${uid}/documents`, {
        body: [
          { id: 1, title: 'Dune', year: 1965 },
          { id: 2, title: 'Dune Messiah', year: 1969 },
        ],
      })
    ).body.taskUid,
  );
  expect(added.status).toBe('succeeded');
});
afterAll(() => s.close());

it('given an index, when the example agent runs, then it lists the tools and indexes, reads the settings and prints the filtered hits', async () => {
  const { stdout } = await run(process.execPath, [
    CLIENT,
    '--url',
    s.url,
    '--key',
    MASTER_KEY,
    '--index',
    uid,
    '--q',
    'dune',
    '--filter',
    'year > 1966',
  ]);
  const lines = stdout.trim().split('\n');
  expect(lines[0]).toMatch(/^connected to quarry \d+\.\d+\.\d+/);
  expect(lines[1]).toBe('tools this key may use: list_indexes, search, get_documents, get_settings');
  expect(lines[2]).toContain(uid);
  expect(lines[3]).toBe(`${uid}: filterable ["year"], sortable [], embedders []`);
  expect(lines.slice(4)).toEqual(['search "dune": 1 hits', '  {"id":2,"title":"Dune Messiah","year":1969}']);
});

it('when the server was started without --experimental-mcp, then the example stops and names the option', async () => {
  const off = await startTestServer();
  try {
    const err: any = await run(process.execPath, [CLIENT, '--url', off.url, '--key', MASTER_KEY]).catch((e) => e);
    expect(err.code).toBe(1);
    expect(err.stderr).toContain('POST /mcp answered 404: start Quarry with --experimental-mcp');
  } finally {
    await off.close();
  }
});
