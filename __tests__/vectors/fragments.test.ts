/**
 * Multimodal embedders (the `multimodal` feature): a `rest` embedder's `indexingFragments` are
 * what documents are embedded from, its `searchFragments` what a query's text and `media` are
 * embedded from. Against a real HTTP server on loopback standing in for a multimodal model;
 * the expected shapes and messages are Meilisearch 1.50's, settled on the reference binary.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

/** The "model": a sum of the vectors of the words the request's body mentions. */
const WORDS: Record<string, number[]> = {
  kefir: [0.5, -0.5, 0],
  intel: [1, 1, 0],
  dustin: [-0.5, 0.5, 0],
  bulldog: [0, 0, 1],
  labrador: [0, 0, -1],
};

let model: http.Server;
let url: string;
const bodies: unknown[] = [];
let s: TestServer;

beforeAll(async () => {
  model = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw);
      bodies.push(body);
      const embed = (item: unknown) => {
        const text = JSON.stringify(item);
        const v = [0, 0, 0];
        for (const [w, e] of Object.entries(WORDS)) {
          if (!text.includes(w)) continue;
          for (let i = 0; i < 3; i++) v[i] += e[i];
        }
        return v;
      };
      res.writeHead(200, { 'Content-Type': 'application/json' });
      // Batched requests (`{"inputs": [<fragment>, "{{..}}"]}`) get one embedding per item.
      res.end(JSON.stringify(Array.isArray(body.inputs) ? { data: body.inputs.map(embed) } : { data: embed(body) }));
    });
  });
  await new Promise<void>((r) => model.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(model.address() as AddressInfo).port}/`;
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
  await new Promise((r) => model.close(r));
});

const features = async (multimodal: boolean) =>
  expect((await s.api('PATCH', '/experimental-features', { body: { multimodal } })).status).toBe(200);
const task = async (r: { status: number; body: any }) => {
  expect(r.status).toBe(202);
  return s.waitTask(r.body.taskUid, 60_000);
};

const embedder = () => ({
  source: 'rest',
  url,
  dimensions: 3,
  request: '{{fragment}}',
  response: { data: '{{embedding}}' },
  indexingFragments: {
    withBreed: { value: '{{ doc.name }} is a {{ doc.breed }}' },
    basic: { value: { text: '{{ doc.name }} is a dog' } },
  },
  searchFragments: {
    justBreed: { value: "It's a {{ media.breed }}" },
    justName: { value: '{{ media.name }} is a dog' },
    query: { value: 'Some pre-prompt for query {{ q }}' },
  },
});

const DOCS = [
  { id: 0, name: 'kefir' },
  { id: 1, name: 'echo', _vectors: { rest: [1, 1, 1] } },
  { id: 2, name: 'intel', breed: 'labrador' },
  { id: 3, name: 'dustin', breed: 'bulldog' },
];

async function fragmentsIndex(settings: Record<string, unknown> = embedder()): Promise<string> {
  await features(true);
  const uid = uniqueIndex('fragments');
  expect(
    (await task(await s.api('PATCH', `/indexes/${uid}/settings`, { body: { embedders: { rest: settings } } }))).status,
  ).toBe('succeeded');
  expect((await task(await s.api('POST', `/indexes/${uid}/documents`, { body: DOCS }))).error).toBeNull();
  return uid;
}

const vectorsOf = async (uid: string) =>
  Object.fromEntries(
    (await s.api('GET', `/indexes/${uid}/documents?retrieveVectors=true`)).body.results.map((d: any) => [
      d.id,
      d._vectors.rest,
    ]),
  );

const search = (uid: string, body: Record<string, unknown>) =>
  s.api('POST', `/indexes/${uid}/search`, {
    body: { hybrid: { semanticRatio: 1, embedder: 'rest' }, limit: 1, ...body },
  });
const first = async (uid: string, body: Record<string, unknown>) => {
  const r = await search(uid, body);
  expect(r.status).toBe(200);
  return r.body.hits[0]?.id;
};

it('when documents are added, then each gets one embedding per fragment it has the fields for, in name order', async () => {
  const uid = await fragmentsIndex();
  expect(await vectorsOf(uid)).toEqual({
    0: { embeddings: [[0.5, -0.5, 0]], regenerate: true },
    1: { embeddings: [[1, 1, 1]], regenerate: false },
    2: {
      embeddings: [
        [1, 1, 0],
        [1, 1, -1],
      ],
      regenerate: true,
    },
    3: {
      embeddings: [
        [-0.5, 0.5, 0],
        [-0.5, 0.5, 1],
      ],
      regenerate: true,
    },
  });
  // The rendered fragment is what the request carries in place of `{{fragment}}`, JSON and all.
  expect(bodies).toContainEqual({ text: 'intel is a dog' });
  expect(bodies).toContainEqual('dustin is a bulldog');
  expect((await s.api('GET', `/indexes/${uid}/stats`)).body).toMatchObject({
    numberOfEmbeddings: 6,
    numberOfEmbeddedDocuments: 4,
  });
});

it('when a search gives media or a query, then the one search fragment they render is embedded', async () => {
  const uid = await fragmentsIndex();
  expect(await first(uid, { vector: [1, 1, 1] })).toBe(1);
  expect(await first(uid, { media: { breed: 'labrador' } })).toBe(2);
  expect(await first(uid, { q: 'bulldog' })).toBe(3);
  expect(bodies).toContainEqual("It's a labrador");
  expect(bodies).toContainEqual('Some pre-prompt for query bulldog');
  // A hybrid search whose media renders no fragment answers with its keywords.
  const hybrid = await search(uid, {
    q: 'dustin',
    media: { ticker: 'x' },
    hybrid: { semanticRatio: 0.5, embedder: 'rest' },
  });
  expect(hybrid.status).toBe(200);
  expect(hybrid.body.hits[0].id).toBe(3);
  expect(hybrid.body.semanticHitCount).toBe(0);
});

it('when media renders several fragments, none, or comes with a vector or without hybrid, then Meilisearch errors answer', async () => {
  const uid = await fragmentsIndex();
  const error = async (body: Record<string, unknown>, code: string, message: string, direct = false) => {
    const r = direct ? await s.api('POST', `/indexes/${uid}/search`, { body }) : await search(uid, body);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code, message });
  };
  await error(
    { media: { name: 'dustin', breed: 'labrador' } },
    'vector_embedding_error',
    'Error while generating embeddings: user error: Query matches multiple search fragments.\n  - Note: First matched fragment `justBreed`.\n  - Note: Second matched fragment `justName`.\n  - Note: {"q":null,"media":{"name":"dustin","breed":"labrador"}}',
  );
  await error(
    { q: 'bulldog', media: { breed: 'labrador' } },
    'vector_embedding_error',
    'Error while generating embeddings: user error: Query matches multiple search fragments.\n  - Note: First matched fragment `justBreed`.\n  - Note: Second matched fragment `query`.\n  - Note: {"q":"bulldog","media":{"breed":"labrador"}}',
  );
  await error(
    { media: { ticker: 'GME', section: 'portfolio' } },
    'vector_embedding_error',
    'Error while generating embeddings: user error: Query matches no search fragment.\n  - Note: {"q":null,"media":{"ticker":"GME","section":"portfolio"}}',
  );
  await error(
    { media: { breed: 'labrador' }, vector: [1, 1, 1] },
    'invalid_search_media_and_vector',
    'Invalid request: both `media` and `vector` parameters are present.',
  );
  await error(
    { media: { breed: 'labrador' } },
    'missing_search_hybrid',
    'Invalid request: missing `hybrid` parameter when `vector` or `media` are present.',
    true,
  );
  await features(false);
  await error(
    { media: { breed: 'labrador' } },
    'feature_not_enabled',
    'passing `media` in a search query requires enabling the `multimodal` experimental feature. See https://github.com/orgs/meilisearch/discussions/846',
  );
  expect(await first(uid, { q: 'bulldog' })).toBe(3);
  await features(true);
});

it('when media goes to an embedder without search fragments, then the error says why', async () => {
  await features(true);
  const uid = uniqueIndex('nofragments');
  await task(
    await s.api('PATCH', `/indexes/${uid}/settings`, {
      body: {
        embedders: {
          r: { source: 'rest', url, dimensions: 3, request: '{{text}}', response: { data: '{{embedding}}' } },
          u: { source: 'userProvided', dimensions: 3 },
        },
      },
    }),
  );
  expect(
    (
      await task(
        await s.api('POST', `/indexes/${uid}/documents`, {
          body: [{ id: 1, name: 'kefir', _vectors: { u: [1, 0, 0] } }],
        }),
      )
    ).error,
  ).toBeNull();
  const media = (embedder: string) =>
    s.api('POST', `/indexes/${uid}/search`, { body: { media: { a: 1 }, hybrid: { embedder, semanticRatio: 1 } } });
  expect((await media('r')).body.message).toBe(
    "Error while generating embeddings: user error: `media` requested, and the configuration has source `rest`, but the configuration doesn't have `searchFragments`.",
  );
  expect((await media('u')).body.message).toBe(
    "Error while generating embeddings: user error: `media` requested but the configuration doesn't have source `rest`",
  );
});

it('when a fragment is removed, changed or added, then the stored embeddings follow, and fragments not named stay', async () => {
  const uid = await fragmentsIndex();
  const removed = await task(
    await s.api('PATCH', `/indexes/${uid}/settings`, {
      body: { embedders: { rest: { indexingFragments: { basic: null } } } },
    }),
  );
  expect(removed.status).toBe('succeeded');
  expect(removed.details.embedders.rest.indexingFragments).toEqual({ basic: null });
  expect(await vectorsOf(uid)).toEqual({
    0: { embeddings: [], regenerate: true },
    1: { embeddings: [[1, 1, 1]], regenerate: false },
    2: { embeddings: [[1, 1, -1]], regenerate: true },
    3: { embeddings: [[-0.5, 0.5, 1]], regenerate: true },
  });
  expect(
    (
      await task(
        await s.api('PATCH', `/indexes/${uid}/settings`, {
          body: { embedders: { rest: { indexingFragments: { other: { value: 'just {{ doc.name }}' } } } } },
        }),
      )
    ).status,
  ).toBe('succeeded');
  const embedders = (await s.api('GET', `/indexes/${uid}/settings/embedders`)).body;
  expect(Object.keys(embedders.rest.indexingFragments)).toEqual(['other', 'withBreed']);
  expect((await vectorsOf(uid))[0]).toEqual({ embeddings: [[0.5, -0.5, 0]], regenerate: true });
  // A document changed so that a fragment renders gets its embedding; the others are not sent again.
  const before = bodies.length;
  await task(
    await s.api('PUT', `/indexes/${uid}/documents`, {
      body: [
        { id: 0, breed: 'bulldog' },
        { id: 2, name: 'intel', breed: 'labrador' },
      ],
    }),
  );
  expect((await vectorsOf(uid))[0].embeddings).toEqual([
    [0.5, -0.5, 0],
    [0.5, -0.5, 1],
  ]);
  expect(bodies.slice(before).sort()).toEqual(['just kefir', 'kefir is a bulldog']);
});

it('when fragments come with a template, without dimensions, one-sided or unparsable, then the update is refused as Meilisearch refuses it', async () => {
  await features(true);
  const uid = uniqueIndex('badfragments');
  const patch = (rest: Record<string, unknown>) =>
    s.api('PATCH', `/indexes/${uid}/settings`, { body: { embedders: { rest } } });
  let r = await patch({ ...embedder(), documentTemplate: '{{ doc.name }}' });
  expect(r.status).toBe(400);
  expect(r.body).toMatchObject({
    code: 'vector_embedding_error',
    message:
      'Error while generating embeddings: user error: cannot pass both fragments and a document template.\n  - Note: 2 fragments declared in `indexingFragments` and 3 fragments declared in `search_fragments_len`.\n  - Hint: remove the declared fragments or remove the `documentTemplate`',
  });
  r = await patch({ ...embedder(), indexingFragments: { a: { value: { x: ['{{ doc.name '] } } } });
  expect(r.status).toBe(400);
  expect(r.body.message).toMatch(
    /^Error while generating embeddings: user error: in ``\.indexingFragments\.a\.x\[0\]``, error while parsing template: liquid:/,
  );
  const { dimensions: _, ...noDimensions } = embedder();
  let t = await task(await patch(noDimensions));
  expect(t.error).toMatchObject({
    code: 'vector_embedding_error',
    message: `Index \`${uid}\`: Error while generating embeddings: user error: cannot infer \`dimensions\` for an embedder using \`indexingFragments\`.\n  - Note: Specify \`dimensions\` explicitly or don't use \`indexingFragments\`.`,
  });
  t = await task(await patch({ ...embedder(), searchFragments: undefined }));
  expect(t.error.message).toBe(
    `Index \`${uid}\`: Error while generating embeddings: user error: inconsistent fragments: \`searchFragments\` is empty, but \`indexingFragments\` declares 2 fragments: basic, withBreed\n - Hint: declare at least one fragment in \`searchFragments\` or remove fragments from \`indexingFragments\` by setting them to \`null\``,
  );
  await features(false);
  r = await patch(embedder());
  expect(r.body).toMatchObject({ code: 'feature_not_enabled' });
  await features(true);
});

it('when a rest embedder’s request or response template is malformed, then the update is refused with Meilisearch’s reason', async () => {
  await features(true);
  const uid = uniqueIndex('templates');
  const patch = (rest: Record<string, unknown>) =>
    s.api('PATCH', `/indexes/${uid}/settings`, { body: { embedders: { rest } } });
  const refused = async (rest: Record<string, unknown>, message: string) => {
    const r = await patch(rest);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({
      code: 'vector_embedding_error',
      message: `Error while generating embeddings: user error: ${message}`,
    });
  };
  const plain = { source: 'rest', url, dimensions: 3, response: { data: '{{embedding}}' } };
  const textNote =
    '\n  - Note: this template is using a document template, and so expects to contain the placeholder "{{text}}" rather than "{{fragment}}"';
  await refused({ ...plain, request: { input: 'say {{text}}' } }, `in \`request\`: "{{text}}" not found${textNote}`);
  await refused(
    { ...plain, request: { input: '{{text}}', again: '{{text}}' } },
    `in \`request.input\`: Found "{{text}}", but it was already present in \`request.again\`${textNote}`,
  );
  await refused(
    { ...plain, request: { input: ['{{text}}', '{{..}}'] } },
    'in `response`: `response` has a single embedding, but `request` has multiple texts to embed',
  );
  await refused(
    { ...embedder(), request: { input: ['{{text}}', '{{..}}'] }, response: { data: ['{{embedding}}', '{{..}}'] } },
    'in `request.input[0]`: Expected "{{fragment}}" inside of the repeated value\n  - Note: this template is using fragments, and so expects to contain the placeholder "{{fragment}}" rathern than "{{text}}"',
  );
  // Which placeholder applies is known once merged: `{{fragment}}` without fragments fails the task.
  const t = await task(await patch({ ...plain, request: { input: '{{fragment}}' } }));
  expect(t.error.message).toBe(
    `Index \`${uid}\`: Error while generating embeddings: user error: in \`request\`: "{{text}}" not found${textNote}`,
  );
  // A batched fragment request carries one rendered fragment per item.
  const batched = await fragmentsIndex({
    ...embedder(),
    request: { inputs: ['{{fragment}}', '{{..}}'] },
    response: { data: ['{{embedding}}', '{{..}}'] },
  });
  expect((await vectorsOf(batched))[2].embeddings).toEqual([
    [1, 1, 0],
    [1, 1, -1],
  ]);
  expect(await first(batched, { media: { breed: 'labrador' } })).toBe(2);
});

describe('_vectors filters', () => {
  let uid: string;
  beforeAll(async () => {
    await features(true);
    uid = uniqueIndex('vectorfilters');
    const set = await task(
      await s.api('PATCH', `/indexes/${uid}/settings`, {
        body: {
          filterableAttributes: ['name'],
          embedders: {
            rest: embedder(),
            tpl: {
              source: 'rest',
              url,
              dimensions: 3,
              request: '{{text}}',
              response: { data: '{{embedding}}' },
              documentTemplate: 'a {{doc.name}}',
            },
            man: { source: 'userProvided', dimensions: 3 },
          },
        },
      }),
    );
    expect(set.status).toBe('succeeded');
    const docs = [
      { id: 0, name: 'kefir', _vectors: { man: [1, 0, 0] } },
      { id: 1, name: 'echo', _vectors: { rest: [1, 1, 1], man: null } },
      { id: 2, name: 'intel', breed: 'labrador', _vectors: { man: [0, 1, 0] } },
      {
        id: 3,
        name: 'dustin',
        breed: 'bulldog',
        _vectors: { man: [], tpl: { embeddings: [[3, 2, 1]], regenerate: false } },
      },
    ];
    expect((await task(await s.api('POST', `/indexes/${uid}/documents`, { body: docs }))).error).toBeNull();
  });

  const ids = async (filter: string) => {
    const r = await s.api('POST', `/indexes/${uid}/search`, { body: { filter, attributesToRetrieve: ['id'] } });
    expect(r.status).toBe(200);
    return r.body.hits.map((h: { id: number }) => h.id).sort();
  };

  it.each([
    ['_vectors EXISTS', [0, 1, 2, 3]],
    ['_vectors.man EXISTS', [0, 2]],
    ['_vectors.man NOT EXISTS', [1, 3]],
    ['_vectors.man.userProvided EXISTS', [0, 1, 2, 3]],
    ['_vectors.man.regenerate EXISTS', []],
    ['_vectors.rest.userProvided EXISTS', [1]],
    ['_vectors.rest.regenerate EXISTS', [0, 2, 3]],
    ['_vectors.rest.documentTemplate EXISTS', []],
    ['_vectors.tpl.documentTemplate EXISTS', [0, 1, 2]],
    ['_vectors.tpl.userProvided EXISTS', [3]],
    ['_vectors.rest.fragments.withBreed EXISTS', [2, 3]],
    ['_vectors.rest.fragments.basic EXISTS', [0, 2, 3]],
    ['NOT _vectors.rest.fragments.basic EXISTS', [1]],
    ['name = intel AND _vectors.rest.fragments.withBreed EXISTS', [2]],
    ['name EXISTS AND _vectors.man EXISTS', [0, 2]],
  ])('when a search filters on %s, then the documents Meilisearch selects are found', async (filter, expected) => {
    expect(await ids(filter)).toEqual(expected);
  });

  it('when a documents fetch filters on a fragment, then the same documents come', async () => {
    const r = await s.api('POST', `/indexes/${uid}/documents/fetch`, {
      body: { filter: '_vectors.rest.fragments.withBreed EXISTS', fields: ['id'] },
    });
    expect(r.body.results.map((d: { id: number }) => d.id)).toEqual([2, 3]);
  });

  it.each([
    [
      '_vectors.nope EXISTS',
      (u: string) =>
        `Index \`${u}\`: The embedder \`nope\` does not exist. Available embedders are: \`man\`, \`rest\`, \`tpl\`.`,
    ],
    [
      '_vectors.rest.fragments.nope EXISTS',
      (u: string) =>
        `Index \`${u}\`: The fragment \`nope\` does not exist on embedder \`rest\`. Available fragments on this embedder are: \`basic\`, \`withBreed\`.`,
    ],
    [
      '_vectors.tpl.fragments.x EXISTS',
      (u: string) =>
        `Index \`${u}\`: The fragment \`x\` does not exist on embedder \`tpl\`. This embedder does not have any configured fragments.`,
    ],
    [
      '_vectors.rest.bogus EXISTS',
      () =>
        'Was expecting one of `fragments`, `userProvided`, `documentTemplate`, `regenerate` or nothing, but instead found `bogus`.\n15:20 _vectors.rest.bogus EXISTS',
    ],
    [
      '_vectors.rest.regenerate.x EXISTS',
      () =>
        'Vector filter can only accept one of `fragments`, `userProvided`, `documentTemplate` or `regenerate`, but found both `regenerate` and `x`.\n26:27 _vectors.rest.regenerate.x EXISTS',
    ],
    ['_vectors.rest = 1', (u: string) => `Index \`${u}\`: Attribute \`_vectors.rest\` is not filterable.`],
  ])('when the filter is %s, then it is refused as Meilisearch refuses it', async (filter, message) => {
    const r = await s.api('POST', `/indexes/${uid}/search`, { body: { filter } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_search_filter');
    expect(r.body.message.startsWith(message(uid))).toBe(true);
  });

  it('when documents are deleted by a _vectors filter, then it is refused as not supported there', async () => {
    const r = await s.api('POST', `/indexes/${uid}/documents/delete`, { body: { filter: '_vectors.man EXISTS' } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_document_filter');
    expect(r.body.message).toMatch(/^Filter condition `_vectors` is not supported for this endpoint\./);
  });
});
