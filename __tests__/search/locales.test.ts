/**
 * `localizedAttributes` and the search `locales` over HTTP. The expectations are Meilisearch
 * 1.50's answers on the same documents and requests (bench/locales.js runs the comparison),
 * except the Swedish case at the end, which the reference binary cannot show (see
 * docs/design/choices-where-the-reference-is-silent.md). Each expectation would differ if the locales were ignored:
 * the Arabic-script texts are where charabia's language decides the words (the Persian
 * normalizer folds Arabic kaf and yeh, `ك`→`ک`, `ي`→`ی`; the Arabic segmenter splits `ال`).
 */
import { startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

// The same word, "book", in Arabic spelling (doc 13) and in Persian spelling (doc 14).
const DOCS = [
  { id: 13, ar: 'كتاب المكتبة', kind: 'a' },
  { id: 14, fa: 'کتاب خانه ی یک', kind: 'b' },
  { id: 1, sv: 'Kött och fläsk på Åland', kind: 'c' },
  { id: 2, sv: 'Kott och flask pa Aland', kind: 'c' },
];

/** An index holding DOCS, then `settings` applied (a settings change reindexes). */
async function index(settings: Record<string, unknown>): Promise<string> {
  const uid = uniqueIndex('loc');
  let r = await s.api('POST', `/indexes/${uid}/documents`, { body: DOCS });
  expect((await s.waitTask(r.body.taskUid)).status).toBe('succeeded');
  r = await s.api('PATCH', `/indexes/${uid}/settings`, { body: { filterableAttributes: ['kind'], ...settings } });
  expect((await s.waitTask(r.body.taskUid)).status).toBe('succeeded');
  return uid;
}

type Hit = { id: number; _formatted: Record<string, string> };
/** `id:highlighted text` of each hit, in order. */
const shown = (hits: Hit[]) =>
  hits.map(
    (h) =>
      `${h.id}:${Object.entries(h._formatted)
        .filter(([k]) => k !== 'id' && k !== 'kind')
        .map(([, v]) => v)
        .join('|')}`,
  );

async function search(uid: string, body: Record<string, unknown>): Promise<string[]> {
  const r = await s.api('POST', `/indexes/${uid}/search`, { body: { attributesToHighlight: ['*'], ...body } });
  expect(r.status).toBe(200);
  return shown(r.body.hits);
}

describe('the search `locales`', () => {
  let plain: string;
  beforeAll(async () => {
    plain = await index({});
  });

  it('when the query is cut as Persian, then its Arabic letters are folded as the Persian document was', async () => {
    // Detected as Arabic, `كتاب` finds the Arabic spelling only; as Persian, the Persian one.
    expect(await search(plain, { q: 'كتاب' })).toEqual(['13:<em>كتاب</em> المكتبة']);
    expect(await search(plain, { q: 'كتاب', locales: ['pes'] })).toEqual(['14:<em>کتاب</em> خانه ی یک']);
    expect(await search(plain, { q: 'كتاب', locales: ['fa'] })).toEqual(['14:<em>کتاب</em> خانه ی یک']);
    // Arabic yeh: no word without the Persian fold.
    expect(await search(plain, { q: 'يك' })).toEqual([]);
    expect(await search(plain, { q: 'يك', locales: ['pes'] })).toEqual(['14:کتاب خانه ی <em>یک</em>']);
  });

  it('when several locales are given, then detection chooses among them', async () => {
    expect(await search(plain, { q: 'كتاب', locales: ['pes', 'ara'] })).toEqual(['13:<em>كتاب</em> المكتبة']);
    expect(await search(plain, { q: 'كتاب', locales: [] })).toEqual(['13:<em>كتاب</em> المكتبة']);
  });

  it('when a locale has no segmenter for the script, then the Arabic article stays attached', async () => {
    // Cut as Arabic, `المكتبة` is `ال` + `مكتبة`; cut as Swedish it is one word, found
    // only by splitting it in two.
    expect(await search(plain, { q: 'المكتبة' })).toEqual(['13:كتاب <em>ال</em><em>مكتبة</em>']);
    // Ids only: the reference leaves the hit unhighlighted (its highlighter matches indexed
    // words only, and the whole word is not one), Quarry highlights the whole word. A space
    // ends the query: Quarry splits no word the query ends in (derivations, not locales).
    const [hit] = await search(plain, { q: 'المكتبة ', locales: ['swe'] });
    expect(hit.startsWith('13:')).toBe(true);
    // Not cut in two (which ignoring `locales` would do).
    expect(hit).not.toContain('<em>ال</em>');
  });

  it('when matches are positioned, then the fields are cut in the query locales', async () => {
    const r = await s.api('POST', `/indexes/${plain}/search`, {
      body: { q: 'كتاب', locales: ['pes'], showMatchesPosition: true },
    });
    expect(r.body.hits.map((h: { id: number; _matchesPosition: unknown }) => [h.id, h._matchesPosition])).toEqual([
      [14, { fa: [{ start: 0, length: 8 }] }],
    ]);
  });

  it('when a multi-search or federated query names locales, then that query is cut in them', async () => {
    const r = await s.api('POST', '/multi-search', {
      body: {
        queries: [
          { indexUid: plain, q: 'كتاب', locales: ['pes'] },
          { indexUid: plain, q: 'كتاب' },
        ],
      },
    });
    expect(r.body.results.map((x: { hits: { id: number }[] }) => x.hits.map((h) => h.id))).toEqual([[14], [13]]);
    const f = await s.api('POST', '/multi-search', {
      body: { federation: {}, queries: [{ indexUid: plain, q: 'كتاب', locales: ['pes'] }] },
    });
    expect(f.body.hits.map((h: { id: number }) => h.id)).toEqual([14]);
  });

  it('when a facet search has a query, then it is cut in the locales', async () => {
    const facets = async (body: Record<string, unknown>) =>
      (await s.api('POST', `/indexes/${plain}/facet-search`, { body: { facetName: 'kind', ...body } })).body.facetHits;
    expect(await facets({ q: 'كتاب' })).toEqual([{ value: 'a', count: 1 }]);
    expect(await facets({ q: 'كتاب', locales: ['pes'] })).toEqual([{ value: 'b', count: 1 }]);
    const bad = await s.api('POST', `/indexes/${plain}/facet-search`, { body: { facetName: 'kind', locales: ['xx'] } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('invalid_search_locales');
    expect(bad.body.message.startsWith('Unknown value `xx` at `.locales[0]`: expected one of `af`, ')).toBe(true);
  });
});

describe('localizedAttributes', () => {
  it('when every attribute is Persian, then both spellings are one word at indexing and in the query', async () => {
    const uid = await index({ localizedAttributes: [{ attributePatterns: ['*'], locales: ['pes'] }] });
    expect(await search(uid, { q: 'كتاب' })).toEqual(['13:<em>كتاب</em> المكتبة', '14:<em>کتاب</em> خانه ی یک']);
    // An explicit locale replaces the index's: cut as Arabic, the query keeps its kaf.
    expect(await search(uid, { q: 'كتاب', locales: ['ara'] })).toEqual([]);
    // Highlighting cuts the text in the query's locales too: the Arabic spelling is not folded.
    expect(await search(uid, { q: 'کتاب', locales: ['swe'] })).toEqual([
      '13:كتاب المكتبة',
      '14:<em>کتاب</em> خانه ی یک',
    ]);
  });

  it('when one attribute is Persian, then only its text is folded, and queries take the locales of the searchable ones', async () => {
    const rules = [{ attributePatterns: ['fa', 'sv'], locales: ['pes', 'swe'] }];
    const uid = await index({ localizedAttributes: rules });
    // The query is detected among Persian and Swedish: Persian; `ar` was cut freely (Arabic).
    expect(await search(uid, { q: 'كتاب' })).toEqual(['14:<em>کتاب</em> خانه ی یک']);
    expect(await search(uid, { q: 'يك' })).toEqual(['14:کتاب خانه ی <em>یک</em>']);
    // A rule on attributes that are not searchable does not choose the query's languages.
    const hidden = await index({
      searchableAttributes: ['ar', 'sv'],
      localizedAttributes: [{ attributePatterns: ['fa'], locales: ['pes'] }],
    });
    expect(await search(hidden, { q: 'كتاب' })).toEqual(['13:<em>كتاب</em> المكتبة']);
  });

  it('when the locale has no segmenter for the script, then the indexed Arabic words stay whole', async () => {
    const uid = await index({ localizedAttributes: [{ attributePatterns: ['*'], locales: ['jpn'] }] });
    expect(await search(uid, { q: 'المكتبة' })).toEqual(['13:كتاب <em>المكتبة</em>']);
    // Cut as Persian the query is `ال` + `مکتبه`: neither is an indexed word.
    expect(await search(uid, { q: 'المكتبة', locales: ['pes'] })).toEqual([]);
  });

  it('when the rules are removed, then the documents are reindexed without them', async () => {
    const uid = await index({ localizedAttributes: [{ attributePatterns: ['*'], locales: ['pes'] }] });
    const r = await s.api('PATCH', `/indexes/${uid}/settings`, { body: { localizedAttributes: null } });
    expect((await s.waitTask(r.body.taskUid)).status).toBe('succeeded');
    expect(await search(uid, { q: 'كتاب' })).toEqual(['13:<em>كتاب</em> المكتبة']);
  });

  it('when an attribute is Swedish, then å, ä and ö stay letters of their own (Quarry; the reference binary lacks the feature)', async () => {
    // Quarry builds charabia's Swedish recomposition (Meilisearch's default build does); the
    // reference binary does not, and answers [1, 2] both times.
    const plain = await index({});
    expect((await search(plain, { q: 'kott' })).map((h) => h.split(':')[0])).toEqual(['1', '2']);
    const swedish = await index({ localizedAttributes: [{ attributePatterns: ['sv'], locales: ['swe'] }] });
    expect(await search(swedish, { q: 'kott' })).toEqual(['2:<em>Kott</em> och flask pa Aland']);
    expect(await search(swedish, { q: 'kött' })).toEqual(['1:<em>Kött</em> och fläsk på Åland']);
  });
});
