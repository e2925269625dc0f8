#!/usr/bin/env node
/**
 * Quarry's MCP endpoint from the official MCP TypeScript SDK: what an agent does before it
 * answers a question over your indexes. It connects to `POST /mcp` with an API key, lists the
 * tools the key may use, lists the indexes, reads one index's settings (to learn what it can
 * filter and sort on) and searches it.
 *
 *   node examples/mcp-agent/client.js --url http://127.0.0.1:7700 --key MASTER_OR_API_KEY \
 *     [--index movies] [--q "space opera"] [--filter "year > 2000"] [--embedder NAME]
 *
 * The server must be started with `--experimental-mcp` (or `QUARRY_EXPERIMENTAL_MCP=true`);
 * without it `/mcp` is no route and answers 404.
 *
 * `@modelcontextprotocol/sdk` is a development dependency of Quarry; in your own project,
 * `npm install @modelcontextprotocol/sdk`.
 */
'use strict';
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

/** Calls a tool and returns its JSON answer; a tool error (bad filter, refused key...) is thrown with Quarry's code. */
async function tool(client, name, args) {
  const result = await client.callTool({ name, arguments: args });
  const answer = JSON.parse(result.content[0].text);
  if (result.isError) throw new Error(`${name}: ${answer.code}: ${answer.message}`);
  return answer;
}

async function main() {
  const url = option('url', 'http://127.0.0.1:7700');
  const key = option('key', process.env.QUARRY_MASTER_KEY || process.env.MEILI_MASTER_KEY);
  const client = new Client({ name: 'quarry-example-agent', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', url), {
    requestInit: { headers: key ? { Authorization: `Bearer ${key}` } : {} },
  });
  await client.connect(transport);
  try {
    const server = client.getServerVersion();
    console.log(`connected to ${server.name} ${server.version}`);

    const { tools } = await client.listTools();
    console.log(`tools this key may use: ${tools.map((t) => t.name).join(', ')}`);

    const { results } = await tool(client, 'list_indexes', {});
    console.log(`indexes: ${results.map((i) => i.uid).join(', ') || '(none)'}`);
    const index = option('index', results[0]?.uid);
    if (!index) return;

    const settings = await tool(client, 'get_settings', { indexUid: index });
    console.log(
      `${index}: filterable ${JSON.stringify(settings.filterableAttributes)}, sortable ${JSON.stringify(settings.sortableAttributes)}, embedders ${JSON.stringify(Object.keys(settings.embedders || {}))}`,
    );

    const search = { indexUid: index, q: option('q', ''), limit: 5 };
    const filter = option('filter');
    if (filter) search.filter = filter;
    const embedder = option('embedder');
    if (embedder) search.hybrid = { embedder, semanticRatio: 0.5 };
    const found = await tool(client, 'search', search);
    console.log(`search ${JSON.stringify(search.q)}: ${found.estimatedTotalHits} hits`);
    for (const hit of found.hits) console.log(`  ${JSON.stringify(hit)}`);
  } finally {
    await client.close();
  }
}

main().catch((err) => {
  // The SDK's transport error carries the HTTP status; a 404 is a server started without the option.
  if (err.code === 404) console.error(`${err.message}\nPOST /mcp answered 404: start Quarry with --experimental-mcp`);
  else console.error(err.message);
  process.exit(1);
});
