/**
 * The interim keyword engine over HTTP (issue 3 replaces it with the relevance engine):
 * every-word documents first, the last word searched as a prefix.
 */
import { startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

const DOCS = [
  { id: 1, title: 'Harry Potter and the Half-Blood Prince' },
  { id: 2, title: 'The Hobbit' },
  { id: 3, title: 'Hamlet', genre: 'sci fi' },
  { id: 4, title: 'Alice in Wonderland' },
  { id: 5, title: 'Harp music' },
];

async function index(settings: Record<string, unknown> = {}): Promise<string> {
  const uid = uniqueIndex('kw');
  let r = await s.api('POST', `/indexes/${uid}/documents`, { body: DOCS });
  expect((await s.waitTask(r.body.taskUid)).status).toBe('succeeded');
  r = await s.api('PATCH', `/indexes/${uid}/settings`, { body: settings });
  expect((await s.waitTask(r.body.taskUid)).status).toBe('succeeded');
  return uid;
}

const ids = (hits: { id: number }[]) => hits.map((h) => h.id).sort((a, b) => a - b);

describe('last word as a prefix', () => {
  let uid: string;
  beforeAll(async () => {
    uid = await index();
  });
  const search = (q: string) => s.api('POST', `/indexes/${uid}/search`, { body: { q } });

  it('when the query ends inside a word, then words starting with it match', async () => {
    expect(ids((await search('har')).body.hits)).toEqual([1, 5]);
    expect(ids((await search('h')).body.hits)).toEqual([1, 2, 3, 5]);
    expect((await search('h')).body.estimatedTotalHits).toBe(4);
  });

  it('when a space follows the last word, then only the whole word matches', async () => {
    expect(ids((await search('har ')).body.hits)).toEqual([]);
    expect(ids((await search('harp ')).body.hits)).toEqual([5]);
  });

  it('when only the last word is a prefix, then earlier words must be whole', async () => {
    const r = await search('harry pri');
    expect(r.body.hits[0].id).toBe(1);
    // With the default strategy (`last`) the first word is required: `har` is no word.
    expect(ids((await search('har prince')).body.hits)).toEqual([]);
  });

  it('when prefixSearch is disabled, then no completion is tried', async () => {
    const u = await index({ prefixSearch: 'disabled' });
    const r = await s.api('POST', `/indexes/${u}/search`, { body: { q: 'har' } });
    expect(r.body.hits).toEqual([]);
  });
});

describe('matching strategy, phrases and negations', () => {
  let uid: string;
  const COMMENTS = [
    { id: 1, comment: 'A french book about a prince' },
    { id: 2, comment: 'Another french book' },
    { id: 3, comment: 'A great book' },
    { id: 4, comment: 'A book, french and about nothing' },
    { id: 5, comment: 'An awesome book about cooking' },
  ];
  beforeAll(async () => {
    uid = uniqueIndex('strat');
    const r = await s.api('POST', `/indexes/${uid}/documents`, { body: COMMENTS });
    expect((await s.waitTask(r.body.taskUid)).status).toBe('succeeded');
  });
  const search = (body: Record<string, unknown>) => s.api('POST', `/indexes/${uid}/search`, { body });

  it('when the strategy is last, then the first word is required and the others rank', async () => {
    const r = await search({ q: 'french book ' });
    expect(ids(r.body.hits)).toEqual([1, 2, 4]);
    expect(r.body.estimatedTotalHits).toBe(3);
    const missingFirst = await search({ q: 'german book ' });
    expect(missingFirst.body.hits).toEqual([]);
  });

  it('when the strategy is all, then every word is required', async () => {
    const r = await search({ q: 'french about ', matchingStrategy: 'all' });
    expect(ids(r.body.hits)).toEqual([1, 4]);
    expect(r.body.estimatedTotalHits).toBe(2);
  });

  it('when the strategy is frequency, then the rarest word is required', async () => {
    // "book" is in every document, "cooking" in one.
    const r = await search({ q: 'book cooking ', matchingStrategy: 'frequency' });
    expect(ids(r.body.hits)).toEqual([5]);
    const last = await search({ q: 'book cooking ' });
    expect(r.body.hits[0].id).toBe(5);
    expect(last.body.estimatedTotalHits).toBe(5);
  });

  it('when a phrase is quoted, then its words must be adjacent and in order', async () => {
    expect(ids((await search({ q: '"french book"' })).body.hits)).toEqual([1, 2]);
    expect(ids((await search({ q: '"french and about"' })).body.hits)).toEqual([4]);
    // `, ` is a hard separator: "book, french" puts 8 positions between the words.
    expect(ids((await search({ q: '"book french"' })).body.hits)).toEqual([]);
    expect(ids((await search({ q: '"french book" about', matchingStrategy: 'all' })).body.hits)).toEqual([1]);
  });

  it('when words or phrases are negated, then documents holding them are left out', async () => {
    expect(ids((await search({ q: 'book -french ' })).body.hits)).toEqual([3, 5]);
    expect(ids((await search({ q: 'book -"french book" ' })).body.hits)).toEqual([3, 4, 5]);
    // Only negations: every other document.
    const r = await search({ q: '-about' });
    expect(ids(r.body.hits)).toEqual([2, 3]);
    expect(r.body.estimatedTotalHits).toBe(2);
  });
});

describe('formatting phrases and absent attributes', () => {
  let uid: string;
  const DOCS = [
    {
      id: 1,
      title: 'Boxing match',
      overview: 'While racing to a boxing match, Ariel meets a boxer. The match was racing fast while boxing.',
    },
    { id: 2, title: 'Zebra', overview: 'A zebra is racing. While a boxing match starts, to a friend.' },
  ];
  beforeAll(async () => {
    uid = uniqueIndex('fmtp');
    const r = await s.api('POST', `/indexes/${uid}/documents`, { body: DOCS });
    expect((await s.waitTask(r.body.taskUid)).status).toBe('succeeded');
  });
  const search = async (body: unknown) => {
    const r = await s.api('POST', `/indexes/${uid}/search`, { body });
    expect(r.status).toBe(200);
    return r.body.hits as any[];
  };

  it('when a phrase matches, then it is wrapped whole and its words nowhere else', async () => {
    const hits = await search({
      q: '"While racing to a boxing match"',
      attributesToSearchOn: ['overview'],
      attributesToHighlight: ['*'],
      showMatchesPosition: true,
    });
    expect(hits.map((h) => h.id)).toEqual([1]);
    expect(hits[0]._formatted.overview).toBe(
      '<em>While racing to a boxing match</em>, Ariel meets a boxer. The match was racing fast while boxing.',
    );
    expect(hits[0]._formatted.title).toBe('Boxing match');
    expect(hits[0]._matchesPosition).toEqual({ overview: [{ start: 0, length: 30 }] });
  });

  it('when a phrase comes with a word, then each is highlighted as itself', async () => {
    const hits = await search({ q: '"boxing match" zebra', attributesToHighlight: ['overview'] });
    const zebra = hits.find((h) => h.id === 2);
    expect(zebra._formatted.overview).toBe(
      'A <em>zebra</em> is racing. While a <em>boxing match</em> starts, to a friend.',
    );
  });

  it('when a crop meets a hard separator, then it grows on the other side', async () => {
    const hits = await search({
      q: '"boxing match"',
      attributesToCrop: ['overview'],
      cropLength: 4,
      attributesToHighlight: ['overview'],
    });
    expect(hits.find((h) => h.id === 1)._formatted.overview).toBe('…to a <em>boxing match</em>…');
    expect(hits.find((h) => h.id === 2)._formatted.overview).toBe('…a <em>boxing match</em> starts…');
  });

  it('when no attribute asked to highlight or crop exists, then hits have no _formatted', async () => {
    for (const body of [
      { q: 'boxing', attributesToHighlight: ['name'] },
      { q: 'boxing', attributesToCrop: ['name'] },
      { q: 'boxing', attributesToHighlight: ['title.x'], attributesToRetrieve: ['id'] },
    ]) {
      const hits = await search(body);
      expect(hits.length).toBeGreaterThan(0);
      for (const h of hits) expect(h).not.toHaveProperty('_formatted');
    }
    // One existing attribute is enough, whichever document has it.
    const hits = await search({ q: 'boxing', attributesToHighlight: ['name', 'title'] });
    expect(hits[0]._formatted.title).toContain('<em>');
  });
});

describe('nested paths in attributesToRetrieve and fields', () => {
  let uid: string;
  beforeAll(async () => {
    uid = uniqueIndex('nest');
    const doc = {
      id: 1,
      cast: [{ name: 'A', role: 'r' }, { role: 'only' }, 'str', { name: { first: 'F' } }],
      director: { name: 'D', age: 3 },
      t: 'Hello world.',
    };
    const r = await s.api('POST', `/indexes/${uid}/documents`, { body: [doc] });
    expect((await s.waitTask(r.body.taskUid)).status).toBe('succeeded');
  });

  it('when a path goes through an array, then each object of it is cut to the path, as Meilisearch selects', async () => {
    const cast = [{ name: 'A' }, {}, 'str', { name: { first: 'F' } }];
    const hit = async (attributesToRetrieve: string[]) =>
      (await s.api('POST', `/indexes/${uid}/search`, { body: { attributesToRetrieve } })).body.hits[0];
    expect(await hit(['cast.name'])).toEqual({ cast });
    // A path that meets a string keeps it.
    expect(await hit(['cast.name.first'])).toEqual({ cast });
    // `*` inside a path is no wildcard.
    expect(await hit(['director.*'])).toEqual({});
    expect(await hit(['director.name', 'id'])).toEqual({ id: 1, director: { name: 'D' } });
    const fetched = await s.api('POST', `/indexes/${uid}/documents/fetch`, { body: { fields: ['cast.name'] } });
    expect(fetched.body.results).toEqual([{ cast }]);
  });

  it('when the crop length is 0, then the text stays whole', async () => {
    const r = await s.api('POST', `/indexes/${uid}/search`, { body: { attributesToCrop: ['t'], cropLength: 0 } });
    expect(r.body.hits[0]._formatted.t).toBe('Hello world.');
  });
});

describe('formatting', () => {
  let uid: string;
  const BOOKS = [
    {
      id: 456,
      title: 'Le Petit Prince',
      comment: 'A french book about a prince that walks on little cute planets',
      genre: ['adventure', 'fantasy'],
      isNull: null,
      isTrue: true,
      meta: { pages: 96, tag: 'Prince classic' },
    },
  ];
  beforeAll(async () => {
    uid = uniqueIndex('fmt');
    const r = await s.api('POST', `/indexes/${uid}/documents`, { body: BOOKS });
    expect((await s.waitTask(r.body.taskUid)).status).toBe('succeeded');
  });
  const search = (body: unknown) => s.api('POST', `/indexes/${uid}/search`, { body });

  it('when highlighting, then matches are wrapped, numbers become strings, other fields stay', async () => {
    const r = await search({ q: 'prince', attributesToHighlight: ['title', 'meta'] });
    const f = r.body.hits[0]._formatted;
    expect(f.title).toBe('Le Petit <em>Prince</em>');
    expect(f.comment).toBe(BOOKS[0].comment);
    expect(f.id).toBe('456');
    expect(f.meta).toEqual({ pages: '96', tag: '<em>Prince</em> classic' });
    expect(f.isNull).toBeNull();
    expect(f.isTrue).toBe(true);
    expect(Object.keys(r.body.hits[0]).slice(-1)).toEqual(['_formatted']);
  });

  it('when tags and a prefix are given, then only the typed part is wrapped in those tags', async () => {
    const r = await search({ q: 'pri', attributesToHighlight: ['*'], highlightPreTag: '[', highlightPostTag: ']' });
    expect(r.body.hits[0]._formatted.comment).toBe('A french book about a [pri]nce that walks on little cute planets');
  });

  it('when cropping, then the best window of cropLength words is kept with markers', async () => {
    const r = await search({ q: 'prince', attributesToCrop: ['comment'], cropLength: 6 });
    expect(r.body.hits[0]._formatted.comment).toBe('…book about a prince that walks…');
    const own = await search({
      q: 'prince',
      attributesToCrop: ['comment:3'],
      cropMarker: '~',
      attributesToHighlight: ['comment'],
    });
    expect(own.body.hits[0]._formatted.comment).toBe('~a <em>prince</em> that~');
    // Only displayed-and-asked fields are added: not retrieved, but cropped, so present.
    const some = await search({ q: 'prince', attributesToRetrieve: ['id'], attributesToCrop: ['comment:2'] });
    expect(some.body.hits[0]).toEqual({ id: 456, _formatted: { id: '456', comment: '…a prince…' } });
  });

  it('when match positions are asked, then byte offsets per field come back, with array indices', async () => {
    const r = await search({ q: 'prince fantasy', showMatchesPosition: true, attributesToRetrieve: ['id'] });
    expect(r.body.hits[0]._matchesPosition).toEqual({
      comment: [{ start: 22, length: 6 }],
      genre: [{ start: 0, length: 7, indices: [1] }],
      'meta.tag': [{ start: 0, length: 6 }],
      title: [{ start: 9, length: 6 }],
    });
  });
});

describe('performance details', () => {
  it('when showPerformanceDetails is set, then each step reports its time', async () => {
    const uid = uniqueIndex('perf');
    const r = await s.api('POST', `/indexes/${uid}/documents`, { body: DOCS });
    expect((await s.waitTask(r.body.taskUid)).status).toBe('succeeded');
    const res = await s.api('POST', `/indexes/${uid}/search`, { body: { q: 'hobbit', showPerformanceDetails: true } });
    const details = res.body.performanceDetails;
    expect(Object.keys(details)).toEqual([
      'search > filter',
      'search > keyword search and ranking',
      'search > format',
      'search',
    ]);
    for (const v of Object.values(details)) expect(v).toMatch(/^[0-9.]+(ns|µs|ms|s)$/);
    const plain = await s.api('POST', `/indexes/${uid}/search`, { body: { q: 'hobbit' } });
    expect(plain.body.performanceDetails).toBeUndefined();
  });
});

describe('typo tolerance', () => {
  let uid: string;
  beforeAll(async () => {
    uid = await index();
  });
  const search = (q: string, extra: Record<string, unknown> = {}, u = uid) =>
    s.api('POST', `/indexes/${u}/search`, { body: { q, ...extra } });

  it('when a word of 5 to 8 letters has one typo, then it still matches', async () => {
    expect(ids((await search('hobit ')).body.hits)).toEqual([2]);
    expect(ids((await search('hamlt ')).body.hits)).toEqual([3]);
    expect(ids((await search('pottre ')).body.hits)).toEqual([1]);
  });

  it('when a word is shorter than 5 letters or has two typos under 9 letters, then no typo is allowed', async () => {
    expect((await search('hrap ')).body.hits).toEqual([]);
    expect((await search('hobbbitt ')).body.hits).toEqual([]);
  });

  it('when a word of 9 letters or more has two typos, then it matches', async () => {
    expect(ids((await search('wondrelnad ')).body.hits)).toEqual([4]);
  });

  it('when the first letter is wrong, then it costs two typos', async () => {
    expect((await search('gobbit ')).body.hits).toEqual([]);
    expect(ids((await search('xonderland ')).body.hits)).toEqual([4]);
  });

  it('when the last word is a prefix, then typos apply to the typed part', async () => {
    expect(ids((await search('hobbti')).body.hits)).toEqual([2]);
  });

  it('when a typo matches, then as many characters as the query word has are highlighted', async () => {
    const r = await search('hobit ', { attributesToHighlight: ['title'], showMatchesPosition: true });
    expect(r.body.hits[0]._formatted.title).toBe('The <em>Hobbi</em>t');
    expect(r.body.hits[0]._matchesPosition.title).toEqual([{ start: 4, length: 5 }]);
  });

  it('when typoTolerance restricts typos, then the settings are obeyed', async () => {
    const off = await index({ typoTolerance: { enabled: false } });
    expect((await search('hobit ', {}, off)).body.hits).toEqual([]);
    const longer = await index({ typoTolerance: { minWordSizeForTypos: { oneTypo: 6, twoTypos: 9 } } });
    expect((await search('hobit ', {}, longer)).body.hits).toEqual([]);
    const words = await index({ typoTolerance: { disableOnWords: ['Hobit'] } });
    expect((await search('hobit ', {}, words)).body.hits).toEqual([]);
    // Stored as Meilisearch stores them: normalized by the default tokenizer, sorted.
    const stored = await index({
      typoTolerance: { disableOnWords: ['Éclair', 'New York', 'Straße', 'apple', "L'avion"] },
    });
    expect((await s.api('GET', `/indexes/${stored}/settings/typo-tolerance`)).body.disableOnWords).toEqual([
      'apple',
      'eclair',
      "l'avion",
      'new york',
      'straße',
    ]);
    expect(ids((await search('hamlt ', {}, words)).body.hits)).toEqual([3]);
  });
});

describe('searchable attributes', () => {
  it('when searchableAttributes changes, then the settings task reindexes and only those fields match', async () => {
    const uid = await index();
    const search = (q: string) => s.api('POST', `/indexes/${uid}/search`, { body: { q } });
    expect(ids((await search('sci ')).body.hits)).toEqual([3]);
    let r = await s.api('PATCH', `/indexes/${uid}/settings`, { body: { searchableAttributes: ['title'] } });
    expect((await s.waitTask(r.body.taskUid)).status).toBe('succeeded');
    expect((await search('sci ')).body.hits).toEqual([]);
    expect(ids((await search('hamlet ')).body.hits)).toEqual([3]);
    // Documents added afterwards follow the setting too.
    r = await s.api('POST', `/indexes/${uid}/documents`, { body: [{ id: 9, title: 'Solaris', genre: 'sci fi' }] });
    expect((await s.waitTask(r.body.taskUid)).status).toBe('succeeded');
    expect((await search('sci ')).body.hits).toEqual([]);
    expect(ids((await search('solaris ')).body.hits)).toEqual([9]);
    r = await s.api('DELETE', `/indexes/${uid}/settings/searchable-attributes`);
    expect((await s.waitTask(r.body.taskUid)).status).toBe('succeeded');
    expect(ids((await search('sci ')).body.hits)).toEqual([3, 9]);
  });
});

describe('attributesToSearchOn', () => {
  let uid: string;
  beforeAll(async () => {
    uid = await index({ filterableAttributes: ['genre'] });
  });

  it('when the search is restricted to attributes, then only matches there count', async () => {
    const search = (body: Record<string, unknown>) => s.api('POST', `/indexes/${uid}/search`, { body });
    expect(ids((await search({ q: 'sci ' })).body.hits)).toEqual([3]);
    expect((await search({ q: 'sci ', attributesToSearchOn: ['title'] })).body.hits).toEqual([]);
    expect(ids((await search({ q: 'sci ', attributesToSearchOn: ['genre'] })).body.hits)).toEqual([3]);
    expect(ids((await search({ q: 'hamlet ', attributesToSearchOn: ['title', 'id'] })).body.hits)).toEqual([3]);
    expect((await search({ q: 'hamlet', attributesToSearchOn: ['id'] })).body.estimatedTotalHits).toBe(0);
    expect(ids((await search({ q: 'hamlet', attributesToSearchOn: null })).body.hits)).toEqual([3]);
  });

  it('when facet search is restricted, then its candidates are too', async () => {
    const fs = (body: Record<string, unknown>) => s.api('POST', `/indexes/${uid}/facet-search`, { body });
    expect((await fs({ facetName: 'genre', q: 'sci ' })).body.facetHits).toEqual([{ value: 'sci fi', count: 1 }]);
    expect((await fs({ facetName: 'genre', q: 'sci ', attributesToSearchOn: ['title'] })).body.facetHits).toEqual([]);
  });

  it('when an attribute is not searchable, then invalid_search_attributes_to_search_on lists them', async () => {
    const u = await index({ searchableAttributes: ['title', 'genre'] });
    const r = await s.api('POST', `/indexes/${u}/search`, { body: { q: 'x', attributesToSearchOn: ['id'] } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_search_attributes_to_search_on');
    expect(r.body.message).toMatch(
      /^Index `[^`]+`: Attribute `id` is not searchable. Available searchable attributes are: `genre, title`.$/,
    );
  });
});

describe('search concurrency limit', () => {
  it('when searches exceed the slots and the queue, then 503 too_many_search_requests with Retry-After', async () => {
    const small = await startTestServer({
      args: ['--experimental-search-queue-size', '0', '--experimental-nb-searches-per-core', '1'],
    });
    try {
      const uid = uniqueIndex('busy');
      const docs = Array.from({ length: 20000 }, (_, i) => ({
        id: i,
        title: `word${i % 97} common text ${i}`,
        n: i % 13,
      }));
      let r = await small.api('POST', `/indexes/${uid}/documents`, { body: docs });
      expect((await small.waitTask(r.body.taskUid)).status).toBe('succeeded');
      r = await small.api('PATCH', `/indexes/${uid}/settings`, {
        body: { filterableAttributes: ['n'], sortableAttributes: ['n'] },
      });
      expect((await small.waitTask(r.body.taskUid)).status).toBe('succeeded');
      const body = { q: 'common', facets: ['n'], sort: ['n:desc'] };
      const all = await Promise.all(
        Array.from({ length: 60 }, () => small.api('POST', `/indexes/${uid}/search`, { body })),
      );
      const refused = all.filter((x) => x.status === 503);
      expect(refused.length).toBeGreaterThan(0);
      expect(all.filter((x) => x.status === 200).length).toBeGreaterThan(0);
      expect(all.every((x) => x.status === 200 || x.status === 503)).toBe(true);
      expect(refused[0].body.code).toBe('too_many_search_requests');
      expect(refused[0].body.type).toBe('system');
      expect(refused[0].headers.get('retry-after')).toBe('10');
    } finally {
      await small.close();
    }
  });
});

describe('stop words and synonyms', () => {
  it('when a query holds stop words, then they are ignored except as its last token', async () => {
    const uid = await index({ stopWords: ['the', 'and'] });
    const search = (q: string) => s.api('POST', `/indexes/${uid}/search`, { body: { q, matchingStrategy: 'all' } });
    // "the" would otherwise be required by `all`; only Harry Potter holds "and".
    expect(ids((await search('the hobbit ')).body.hits)).toEqual([2]);
    expect(ids((await search('harry and the prince ')).body.hits)).toEqual([1]);
    // Stop words match as typed: "The" is not "the", so it stays (and Alice has no "the").
    expect(ids((await search('the alice ')).body.hits)).toEqual([4]);
    expect((await search('The alice ')).body.hits).toEqual([]);
    // The last token stays.
    expect(ids((await search('hobbit the')).body.hits)).toEqual([2]);
    expect((await search('alice the')).body.hits).toEqual([]);
    // Stop words are not indexed: "the" alone finds only "The", which is not one.
    expect(ids((await search('the')).body.hits)).toEqual([2]);
  });

  it('when a word has synonyms, then documents holding them match too, multi-word ones as phrases', async () => {
    const uid = await index({ synonyms: { wizard: ['potter', 'half blood'], play: ['hamlet'], Tolkien: ['hobbit'] } });
    const search = (q: string, extra: Record<string, unknown> = {}) =>
      s.api('POST', `/indexes/${uid}/search`, { body: { q, ...extra } });
    expect(ids((await search('wizard ')).body.hits)).toEqual([1]);
    expect(ids((await search('play ')).body.hits)).toEqual([3]);
    expect(ids((await search('tolkien ')).body.hits)).toEqual([2]);
    // One way: "hamlet" does not bring "play".
    expect(ids((await search('hamlet ')).body.hits)).toEqual([3]);
    const r = await search('play ', { attributesToHighlight: ['title'] });
    expect(r.body.hits[0]._formatted.title).toBe('<em>Hamlet</em>');
  });
});
