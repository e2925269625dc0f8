#!/usr/bin/env node
/**
 * A chat over an index: Quarry searches a small movie index for the model and streams its
 * answer, with the `openai` package as the client.
 *
 *   node examples/chat/chat.js --quarry http://127.0.0.1:7700 --key MASTER_KEY \
 *     --llm http://127.0.0.1:11434/v1 --model llama3.1 "Which movies are set in space?"
 *
 * `--llm` is any local OpenAI-compatible server (Ollama, llama.cpp's server, vLLM, LM Studio),
 * reached by Quarry (it must be within `--experimental-allowed-ip-networks`, loopback by
 * default). Without `--llm`, a stand-in model on loopback is started: it asks Quarry for one
 * search (the question's last word), then answers with what it was given, so the whole path
 * runs with nothing else installed.
 */
'use strict';
const http = require('node:http');
const { parseArgs } = require('node:util');
const OpenAI = require('openai').default;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    quarry: { type: 'string', default: 'http://127.0.0.1:7700' },
    key: { type: 'string', default: 'masterKey' },
    llm: { type: 'string' },
    model: { type: 'string', default: 'llama3.1' },
    workspace: { type: 'string', default: 'example' },
  },
});
const question = positionals.join(' ') || 'Which movies are set in space?';

const MOVIES = [
  {
    id: 1,
    title: 'Interstellar',
    year: 2014,
    genre: 'scifi',
    overview: 'Explorers travel through a wormhole in space to find a new home for humanity.',
  },
  {
    id: 2,
    title: 'Gravity',
    year: 2013,
    genre: 'scifi',
    overview: 'Two astronauts are stranded in space after their shuttle is destroyed.',
  },
  {
    id: 3,
    title: 'Amelie',
    year: 2001,
    genre: 'romance',
    overview: 'A shy waitress in Paris decides to change the lives of those around her.',
  },
  {
    id: 4,
    title: 'The Martian',
    year: 2015,
    genre: 'scifi',
    overview: 'An astronaut stranded on Mars must survive until rescue.',
  },
];

async function quarry(method, path, body) {
  const r = await fetch(values.quarry + path, {
    method,
    headers: { Authorization: `Bearer ${values.key}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await r.json();
  if (r.status >= 400) throw new Error(`${method} ${path}: ${answer.message}`);
  if (answer.taskUid !== undefined) {
    for (;;) {
      const t = await (
        await fetch(`${values.quarry}/tasks/${answer.taskUid}`, { headers: { Authorization: `Bearer ${values.key}` } })
      ).json();
      if (t.status === 'failed') throw new Error(`task ${t.uid}: ${t.error.message}`);
      if (t.status === 'succeeded') break;
      await new Promise((res) => setTimeout(res, 50));
    }
  }
  return answer;
}

/** The stand-in model's idea of keywords: the question's last word. */
const lastWord = (text) =>
  text
    .replace(/[^\p{L}\p{N}\s]/gu, '')
    .trim()
    .split(/\s+/)
    .pop() ?? '';

/** A stand-in OpenAI-compatible model: one search, then an answer from the tool's result. */
function standInModel() {
  const chunk = (delta, finish = null) => ({
    id: 'stand-in',
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model: 'stand-in',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const { messages } = JSON.parse(body);
      const last = messages[messages.length - 1];
      const user = [...messages].reverse().find((m) => m.role === 'user');
      const chunks =
        last.role === 'tool'
          ? [
              chunk({ role: 'assistant', content: 'From the index: ' }),
              chunk({ content: last.content.split('\n').join('; ') }),
              chunk({}, 'stop'),
            ]
          : [
              chunk({
                role: 'assistant',
                tool_calls: [
                  {
                    index: 0,
                    id: 'call_1',
                    type: 'function',
                    function: {
                      name: '_meiliSearchInIndex',
                      arguments: JSON.stringify({ index_uid: 'movies', q: lastWord(user.content), filter: null }),
                    },
                  },
                ],
              }),
              chunk({}, 'tool_calls'),
            ];
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\n\n`);
      res.end('data: [DONE]\n\n');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function main() {
  const stand = values.llm ? null : await standInModel();
  const llm = values.llm ?? `http://127.0.0.1:${stand.address().port}/v1`;
  try {
    await quarry('PATCH', '/experimental-features', { chatCompletions: true });
    await quarry('POST', '/indexes/movies/documents', MOVIES);
    await quarry('PATCH', '/indexes/movies/settings', {
      filterableAttributes: ['genre', 'year'],
      chat: {
        description: 'Movies with their year, genre and a short overview',
        documentTemplate: '{{ doc.title }} ({{ doc.year }}): {{ doc.overview }}',
        searchParameters: { limit: 3, matchingStrategy: 'last' },
      },
    });
    // `vLlm` is the source for any OpenAI-compatible server at a base URL of your own.
    await quarry('PATCH', `/chats/${values.workspace}/settings`, {
      source: 'vLlm',
      baseUrl: llm,
      prompts: { system: 'Answer from the movies you find with the search tool. Be brief.' },
    });

    const client = new OpenAI({ baseURL: `${values.quarry}/chats/${values.workspace}`, apiKey: values.key });
    const stream = await client.chat.completions.create({
      model: values.model,
      stream: true,
      messages: [{ role: 'user', content: question }],
      // Declared so that Quarry reports its searches and their sources; never sent to the model.
      tools: ['_meiliSearchProgress', '_meiliSearchSources'].map((name) => ({ type: 'function', function: { name } })),
    });
    console.log(`> ${question}`);
    for await (const c of stream) {
      const delta = c.choices[0]?.delta ?? {};
      for (const call of delta.tool_calls ?? []) {
        const args = JSON.parse(call.function.arguments);
        if (call.function.name === '_meiliSearchProgress') console.log(`[searching ${args.function_arguments}]`);
        if (call.function.name === '_meiliSearchSources')
          console.log(`[sources: ${args.sources.map((d) => d.title).join(', ')}]`);
      }
      if (delta.content) process.stdout.write(delta.content);
    }
    process.stdout.write('\n');
  } finally {
    stand?.close();
  }
}

main().catch((err) => {
  console.error(err.message);
  process.exit(1);
});
