/**
 * The relevancy ranking rules over HTTP, each pinned on a small hand-made corpus where it alone
 * decides the order (documents are inserted so that the internal-id tie order would give the
 * opposite answer), plus ranking scores, their details and the score threshold, and the
 * tokenization settings that change what is indexed.
 */
import { startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

type Doc = Record<string, unknown> & { id: number };

async function index(docs: Doc[], settings: Record<string, unknown> = {}): Promise<string> {
  const uid = uniqueIndex('rank');
  let r = await s.api('PATCH', `/indexes/${uid}/settings`, { body: settings });
  expect((await s.waitTask(r.body.taskUid)).status).toBe('succeeded');
  r = await s.api('POST', `/indexes/${uid}/documents`, { body: docs });
  expect((await s.waitTask(r.body.taskUid)).status).toBe('succeeded');
  return uid;
}

async function search(uid: string, body: Record<string, unknown>) {
  const r = await s.api('POST', `/indexes/${uid}/search`, { body });
  expect(r.status).toBe(200);
  return r.body;
}

const order = (hits: { id: number }[]) => hits.map((h) => h.id);

describe('ranking rules, one at a time', () => {
  it('when documents hold fewer query words, then `words` puts them after (matchingWords counts them)', async () => {
    const uid = await index([
      { id: 1, t: 'alpha' },
      { id: 2, t: 'alpha beta' },
      { id: 3, t: 'alpha beta gamma' },
    ]);
    const r = await search(uid, { q: 'alpha beta gamma', showRankingScoreDetails: true });
    expect(order(r.hits)).toEqual([3, 2, 1]);
    expect(r.hits.map((h: any) => h._rankingScoreDetails.words.matchingWords)).toEqual([3, 2, 1]);
    expect(r.hits[0]._rankingScoreDetails.words.maxMatchingWords).toBe(3);
  });

  it('when a document needs a typo to match, then `typo` puts it after the exact one', async () => {
    const uid = await index([
      { id: 1, t: 'mountian bike' },
      { id: 2, t: 'mountain bike' },
    ]);
    const r = await search(uid, { q: 'mountain', showRankingScoreDetails: true });
    expect(order(r.hits)).toEqual([2, 1]);
    expect(r.hits.map((h: any) => h._rankingScoreDetails.typo.typoCount)).toEqual([0, 1]);
    expect(r.hits[0]._rankingScoreDetails.typo.maxTypoCount).toBe(1);
  });

  it('when a word is too short for typos, then it still may cost one (a split), as Meilisearch scores it', async () => {
    const uid = await index([
      { id: 1, t: 'red' },
      { id: 2, t: 'green red' },
    ]);
    const r = await search(uid, { q: 'red', showRankingScore: true, showRankingScoreDetails: true });
    expect(order(r.hits)).toEqual([1, 2]);
    expect(r.hits.map((h: any) => h._rankingScoreDetails.typo)).toEqual([
      { order: 1, typoCount: 0, maxTypoCount: 1, score: 1 },
      { order: 1, typoCount: 0, maxTypoCount: 1, score: 1 },
    ]);
    // Meilisearch 1.50: 0.9242424242424242 (with a budget of 0 the score would be 0.848).
    expect(r.hits[1]._rankingScore).toBeCloseTo(0.9242424242, 9);
    const phrase = await search(uid, { q: '"red"', showRankingScoreDetails: true });
    expect(phrase.hits[0]._rankingScoreDetails.typo.maxTypoCount).toBe(0);
  });

  it('when query words sit farther apart or swapped, then `proximity` ranks them lower', async () => {
    const uid = await index([
      { id: 1, t: 'red big fast car' },
      { id: 2, t: 'car red' },
      { id: 3, t: 'red car' },
      { id: 4, t: 'red' },
      { id: 5, t: 'car' },
    ]);
    const r = await search(uid, { q: 'red car', matchingStrategy: 'all', showRankingScoreDetails: true });
    expect(order(r.hits)).toEqual([3, 2, 1]);
    expect(r.hits.map((h: any) => h._rankingScoreDetails.proximity.score)).toEqual([1, 0.75, 0.5]);
  });

  it('when a word is in a more important attribute, then `attributeRank` puts it first', async () => {
    const docs = [
      { id: 1, title: 'nothing', overview: 'a story of dragons' },
      { id: 2, title: 'dragons', overview: 'nothing' },
    ];
    const uid = await index(docs, { searchableAttributes: ['title', 'overview'] });
    const r = await search(uid, { q: 'dragons', showRankingScoreDetails: true });
    expect(order(r.hits)).toEqual([2, 1]);
    expect(r.hits[0]._rankingScoreDetails.attributeRank.score).toBe(1);
    expect(r.hits[1]._rankingScoreDetails.attributeRank.score).toBe(0.5);
    // With every attribute searchable in the same rank, the rule is neutral.
    const flat = await index(docs);
    const f = await search(flat, { q: 'dragons', showRankingScoreDetails: true });
    expect(f.hits.map((h: any) => h._rankingScoreDetails.attributeRank.score)).toEqual([1, 1]);
  });

  it('when a word is nearer the start of its attribute, then `wordPosition` puts it first', async () => {
    const uid = await index([
      { id: 1, t: 'a very good dog' },
      { id: 2, t: 'dog food' },
    ]);
    const r = await search(uid, { q: 'dog', showRankingScoreDetails: true });
    expect(order(r.hits)).toEqual([2, 1]);
    expect(r.hits[0]._rankingScoreDetails.wordPosition.score).toBe(1);
    expect(r.hits[1]._rankingScoreDetails.wordPosition.score).toBeLessThan(1);
  });

  it('when an attribute is exactly the query, then `exactness` puts it before one that only starts with it', async () => {
    const uid = await index([
      { id: 1, t: 'new york city' },
      { id: 2, t: 'new york' },
    ]);
    const r = await search(uid, { q: 'new york', showRankingScoreDetails: true });
    expect(order(r.hits)).toEqual([2, 1]);
    expect(r.hits.map((h: any) => h._rankingScoreDetails.exactness.matchType)).toEqual(['exactMatch', 'matchesStart']);
  });

  it('when the last word matches as typed, then `exactness` puts it before a prefix completion', async () => {
    const uid = await index([
      { id: 1, t: 'yorkshire pudding' },
      { id: 2, t: 'old york pudding' },
    ]);
    // Both are prefix matches of `york` at 0 typos; only 2 holds the word itself.
    const r = await search(uid, { q: 'york', showRankingScoreDetails: true });
    const d = r.hits.map((h: any) => h._rankingScoreDetails);
    // 1 is better placed (position 0), which wordPosition decides before exactness.
    expect(order(r.hits)).toEqual([1, 2]);
    expect(d[0].exactness.matchType).toBe('noExactMatch');
    expect(d[0].exactness.matchingWords).toBe(0);
    expect(d[1].exactness.matchingWords).toBe(1);
    // With exactness first, the document holding the word wins.
    const uid2 = await index(
      [
        { id: 1, t: 'yorkshire pudding' },
        { id: 2, t: 'old york pudding' },
      ],
      { rankingRules: ['exactness', 'words', 'typo', 'proximity', 'attributeRank', 'wordPosition'] },
    );
    expect(order((await search(uid2, { q: 'york' })).hits)).toEqual([2, 1]);
  });

  it('when a custom rule comes first, then it decides before relevancy, and sort keys show in the details', async () => {
    const uid = await index(
      [
        { id: 1, t: 'blue', rank: 1 },
        { id: 2, t: 'blue sky', rank: 5 },
        { id: 3, t: 'sky', rank: 9 },
      ],
      {
        sortableAttributes: ['rank'],
        rankingRules: ['rank:desc', 'words', 'typo', 'proximity', 'attributeRank', 'wordPosition', 'exactness'],
      },
    );
    const r = await search(uid, { q: 'blue sky', matchingStrategy: 'last', showRankingScoreDetails: true });
    expect(order(r.hits)).toEqual([2, 1]);
    expect(Object.keys(r.hits[0]._rankingScoreDetails)).toEqual([
      'rank:desc',
      'words',
      'typo',
      'proximity',
      'attributeRank',
      'wordPosition',
      'exactness',
    ]);
    expect(r.hits[0]._rankingScoreDetails['rank:desc']).toEqual({ order: 0, value: 5 });
  });
});

describe('short pages', () => {
  it('when fewer hits are asked, then they are the first of the full order (whatever shortcut ranked them)', async () => {
    // Words at every place: first or later in a field, in the first or second attribute,
    // completions and exact words, typos.
    const words = ['sun', 'sunny', 'sunflower', 'moon', 'star', 'snu', 'sky'];
    const docs: Doc[] = [];
    let seed = 7;
    const next = () => (seed = (seed * 48271) % 2147483647);
    for (let id = 1; id <= 120; id++) {
      const pick = (n: number) => Array.from({ length: n }, () => words[next() % words.length]).join(' ');
      docs.push({ id, title: pick(1 + (next() % 3)), body: pick(1 + (next() % 6)) });
    }
    const uid = await index(docs, { searchableAttributes: ['title', 'body'] });
    for (const q of [
      'sun',
      'sun ',
      'su',
      'moon',
      'sunflower',
      'star sun',
      'sky',
      'sunnx ',
      'sunflowr',
      'moon star',
      'star sun moon',
      'moon st',
      'sun sunn',
      'sky moon ',
    ]) {
      const full = order((await search(uid, { q, limit: 200 })).hits);
      expect(full.length).toBeGreaterThan(0);
      for (const limit of [1, 3, 10]) {
        expect(order((await search(uid, { q, limit })).hits)).toEqual(full.slice(0, limit));
      }
      expect(order((await search(uid, { q, offset: 2, limit: 3 })).hits)).toEqual(full.slice(2, 5));
    }
  });
});

describe('ranking scores', () => {
  let uid: string;
  beforeAll(async () => {
    uid = await index([
      { id: 1, title: 'Le Petit Prince', comment: 'A french book about a prince that walks on little cute planets' },
      { id: 2, title: 'The prince of tides' },
      { id: 3, title: 'Pride and Prejudice' },
    ]);
  });

  it('when scores are asked, then each hit has one in (0, 1], ordered as the hits', async () => {
    const r = await search(uid, { q: 'prince', showRankingScore: true });
    const scores = r.hits.map((h: any) => h._rankingScore);
    expect(scores.length).toBe(2);
    for (const x of scores) expect(x > 0 && x <= 1).toBe(true);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    expect((await search(uid, { showRankingScore: true })).hits[0]._rankingScore).toBe(1);
  });

  it('when details are asked, then every rule is listed in order with its numbers', async () => {
    const r = await search(uid, { q: 'prince', showRankingScoreDetails: true });
    const d = r.hits[0]._rankingScoreDetails;
    expect(Object.keys(d)).toEqual(['words', 'typo', 'proximity', 'attributeRank', 'wordPosition', 'exactness']);
    expect(d.words).toEqual({ order: 0, matchingWords: 1, maxMatchingWords: 1, score: 1 });
    expect(d.typo.order).toBe(1);
    expect(d.proximity).toEqual({ order: 2, score: 1 });
    expect(Object.keys(d.exactness)).toContain('matchType');
  });

  it('when the legacy `attribute` rule is configured, then one `attribute` entry holds both scores', async () => {
    const u = await index([{ id: 1, t: 'a b' }], {
      rankingRules: ['words', 'typo', 'proximity', 'attribute', 'exactness'],
    });
    const d = (await search(u, { q: 'b', showRankingScoreDetails: true })).hits[0]._rankingScoreDetails;
    expect(Object.keys(d)).toEqual(['words', 'typo', 'proximity', 'attribute', 'exactness']);
    expect(Object.keys(d.attribute)).toEqual([
      'order',
      'attributeRankingOrderScore',
      'queryWordDistanceScore',
      'score',
    ]);
    expect(d.attribute.attributeRankingOrderScore).toBe(1);
    expect(d.attribute.queryWordDistanceScore).toBeLessThan(1);
  });

  it('when a threshold is set, then hits below it are dropped and not counted', async () => {
    const all = await search(uid, { q: 'prince', showRankingScore: true });
    const [best, second] = all.hits.map((h: any) => h._rankingScore);
    expect(best).toBeGreaterThan(second);
    const r = await search(uid, { q: 'prince', rankingScoreThreshold: (best + second) / 2 });
    expect(r.hits.length).toBe(1);
    expect(r.estimatedTotalHits).toBe(1);
    const exact = await search(uid, { q: 'prince', rankingScoreThreshold: second, showRankingScore: true });
    expect(exact.hits.length).toBe(2);
  });
});

describe('query derivations and typo settings', () => {
  it('when two query words are one word in a document, or one query word two, then they match at a typo', async () => {
    const uid = await index([
      { id: 1, t: 'sunflower oil' },
      { id: 2, t: 'sun flower seeds' },
      { id: 3, t: 'flower sun' },
    ]);
    // "sun flower" finds the concatenation; the two words in order come first.
    const r = await search(uid, { q: 'sun flower ', showRankingScoreDetails: true });
    expect(order(r.hits)).toEqual([2, 3, 1]);
    expect(r.hits[2]._rankingScoreDetails.typo.typoCount).toBe(2);
    // "sunflower" finds the split words (not the swapped ones), even with typos off.
    const split = await search(uid, { q: 'sunflower ', showRankingScoreDetails: true });
    expect(order(split.hits)).toEqual([1, 2]);
    expect(split.hits[1]._rankingScoreDetails.typo.typoCount).toBe(1);
    // Three words too.
    const three = await index([{ id: 1, t: 'newyorkcity guide' }]);
    expect(order((await search(three, { q: 'new york city ', matchingStrategy: 'all' })).hits)).toEqual([1]);
    const off = await index([{ id: 2, t: 'sun flower seeds' }], { typoTolerance: { enabled: false } });
    expect(order((await search(off, { q: 'sunflower ' })).hits)).toEqual([2]);
  });

  it('when a synonym key has several words, then those words in a row find its synonyms', async () => {
    const uid = await index(
      [
        { id: 1, t: 'nyc pizza' },
        { id: 2, t: 'new york pizza' },
        { id: 3, t: 'new pizza in york' },
      ],
      { synonyms: { 'new york': ['nyc'] } },
    );
    expect(order((await search(uid, { q: 'new york pizza', matchingStrategy: 'all' })).hits).sort()).toEqual([1, 2, 3]);
    // The words must follow each other in the query.
    expect(order((await search(uid, { q: 'york new ', matchingStrategy: 'all' })).hits).sort()).toEqual([2, 3]);
    const r = await search(uid, { q: 'new york', attributesToHighlight: ['t'] });
    expect(r.hits.find((h: any) => h.id === 1)._formatted.t).toBe('<em>nyc</em> pizza');
  });

  it('when typos are disabled on an attribute, then only exact words match there', async () => {
    const uid = await index(
      [
        { id: 1, sku: 'lantern', name: 'x' },
        { id: 2, sku: 'x', name: 'lantern' },
      ],
      { typoTolerance: { disableOnAttributes: ['sku'] } },
    );
    expect(order((await search(uid, { q: 'lantren ' })).hits)).toEqual([2]);
    expect(order((await search(uid, { q: 'lantern ' })).hits)).toEqual([1, 2]);
  });

  it('when proximity is byAttribute, then words anywhere in one attribute are as close as adjacent ones', async () => {
    const docs = [
      { id: 1, t: 'red big fast car' },
      { id: 2, t: 'red car' },
    ];
    const byWord = await index(docs);
    expect(order((await search(byWord, { q: 'red car', showRankingScoreDetails: true })).hits)).toEqual([2, 1]);
    const byAttr = await index(docs, { proximityPrecision: 'byAttribute' });
    const r = await search(byAttr, { q: 'red car', showRankingScoreDetails: true });
    expect(r.hits.map((h: any) => h._rankingScoreDetails.proximity.score)).toEqual([1, 1]);
  });

  it('when searchCutoffMs runs out, then searches still answer with a full page of matching hits', async () => {
    const docs = Array.from({ length: 5000 }, (_, i) => ({
      id: i,
      t: `alpha beta ${i % 7 === 0 ? 'gamma' : 'delta'} ${i}`,
    }));
    const uid = await index(docs, { searchCutoffMs: 1 });
    for (const q of ['alpha', 'alpha gamma', 'alpha 12']) {
      const r = await search(uid, { q });
      expect(r.hits.length).toBe(20);
      for (const h of r.hits) expect(h.t.startsWith('alpha')).toBe(true);
    }
  });
});

describe('tokenization settings', () => {
  it('when accents and case differ, then words still match', async () => {
    const uid = await index([{ id: 1, t: 'Crème Brûlée au CAFÉ' }]);
    expect(order((await search(uid, { q: 'creme brulee cafe' })).hits)).toEqual([1]);
    const r = await search(uid, { q: 'cafe', attributesToHighlight: ['t'] });
    expect(r.hits[0]._formatted.t).toBe('Crème Brûlée au <em>CAFÉ</em>');
  });

  it('when a separator is made a word character, then words keep it, after a reindex', async () => {
    const uid = await index([
      { id: 1, t: 'C++ and C#' },
      { id: 2, t: 'C and more' },
      { id: 3, t: 'blueandgreen' },
    ]);
    expect((await search(uid, { q: 'green ' })).hits).toEqual([]);
    let r = await s.api('PATCH', `/indexes/${uid}/settings`, { body: { nonSeparatorTokens: ['+', '#'] } });
    expect((await s.waitTask(r.body.taskUid)).status).toBe('succeeded');
    expect(order((await search(uid, { q: 'c++ ' })).hits)).toEqual([1]);
    expect(order((await search(uid, { q: 'c# ' })).hits)).toEqual([1]);
    r = await s.api('PATCH', `/indexes/${uid}/settings`, { body: { separatorTokens: ['and'] } });
    expect((await s.waitTask(r.body.taskUid)).status).toBe('succeeded');
    // "and" now cuts words, even inside one.
    expect(order((await search(uid, { q: 'green ' })).hits)).toEqual([3]);
  });

  it('when a payload repeats documents across tokenizing chunks, then each is indexed once, as its last version', async () => {
    const docs: Doc[] = [];
    for (let i = 0; i < 5000; i++) docs.push({ id: i % 4500, t: `common first${i % 4500}` });
    for (let i = 0; i < 300; i++) docs.push({ id: i * 7, t: `common final${i * 7}` });
    const uid = await index(docs, { pagination: { maxTotalHits: 10000 }, typoTolerance: { enabled: false } });
    const all = await search(uid, { q: 'common ', hitsPerPage: 1 });
    expect(all.totalHits).toBe(4500);
    expect((await search(uid, { q: 'first7 ' })).hits).toEqual([]);
    expect(order((await search(uid, { q: 'final7 ' })).hits)).toEqual([7]);
    expect(order((await search(uid, { q: 'first8 ' })).hits)).toEqual([8]);
  });

  it('when locales are given, then they are checked and accepted in both forms', async () => {
    const uid = await index([{ id: 1, t: 'bonjour' }]);
    expect(order((await search(uid, { q: 'bonjour', locales: ['fr', 'fra'] })).hits)).toEqual([1]);
    const get = await s.api('GET', `/indexes/${uid}/search?q=bonjour&locales=fr,eng`);
    expect(get.status).toBe(200);
    const bad = await s.api('POST', `/indexes/${uid}/search`, { body: { q: 'bonjour', locales: ['french'] } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('invalid_search_locales');
    expect(bad.body.message.startsWith('Unknown value `french` at `.locales[0]`: ')).toBe(true);
  });

  it('when the dictionary holds a string, then it is one word', async () => {
    const uid = await index(
      [
        { id: 1, t: 'J. R. R. Tolkien' },
        { id: 2, t: 'R. Tolkien' },
      ],
      { dictionary: ['J. R. R.'] },
    );
    expect(order((await search(uid, { q: 'J. R. R.' })).hits)).toEqual([1]);
  });

  it('when attributesToSearchOn is given, then only those attributes match, read from the index', async () => {
    const uid = await index([
      { id: 1, title: 'dragons', overview: 'x' },
      { id: 2, title: 'x', overview: 'dragons' },
    ]);
    expect(order((await search(uid, { q: 'dragons', attributesToSearchOn: ['overview'] })).hits)).toEqual([2]);
    expect((await search(uid, { q: 'dragons', attributesToSearchOn: ['overview'] })).estimatedTotalHits).toBe(1);
  });
});
