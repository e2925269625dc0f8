/**
 * Range filters and facet counts over thousands of documents, where the engine gathers a
 * range's documents through a dense bit set and reads the counts over every document from
 * counts kept with the column (issue 18): the answers must equal what the documents say,
 * computed here document by document, also after deletions.
 */
import { startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

type Doc = { id: number; n?: number | number[] | null; g?: string | string[] };

/** Numbers (integers and halves, `-0`, repeats in arrays), nulls, empty arrays, missing values. */
function makeDocs(count: number): Doc[] {
  const docs: Doc[] = [];
  for (let i = 0; i < count; i++) {
    const d: Doc = { id: i };
    switch (i % 9) {
      case 0:
        break;
      case 1:
        d.n = null;
        break;
      case 2:
        d.n = [];
        break;
      case 3:
        d.n = [i % 40, (i * 7) % 40, i % 40];
        break;
      case 4:
        d.n = -0;
        break;
      case 5:
        d.n = [0, (i % 30) + 0.5];
        break;
      default:
        d.n = (i % 120) - 20.5;
    }
    if (i % 4 !== 0) d.g = i % 3 === 0 ? [`G${i % 25}`, `g${i % 25}`] : `g${i % 17}`;
    docs.push(d);
  }
  return docs;
}

const numbersOf = (d: Doc): number[] => (d.n === undefined || d.n === null ? [] : Array.isArray(d.n) ? d.n : [d.n]);
const stringsOf = (d: Doc): string[] =>
  (d.g === undefined ? [] : Array.isArray(d.g) ? d.g : [d.g]).map((x) => x.toLowerCase());

/** Per printed value, how many documents hold it (once per document). */
function countNumbers(docs: Doc[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const d of docs) {
    for (const n of new Set(numbersOf(d).map((x) => (x === 0 ? 0 : x)))) out.set(n, (out.get(n) ?? 0) + 1);
  }
  return out;
}

describe('value columns over many documents', () => {
  let uid: string;
  let kept: Doc[];
  beforeAll(async () => {
    uid = uniqueIndex('vcl');
    const docs = makeDocs(6000);
    const add = await s.api('POST', `/indexes/${uid}/documents`, { body: docs });
    expect((await s.waitTask(add.body.taskUid, 60000)).status).toBe('succeeded');
    const set = await s.api('PATCH', `/indexes/${uid}/settings`, {
      body: { filterableAttributes: ['n', 'g'], pagination: { maxTotalHits: 10000 } },
    });
    expect((await s.waitTask(set.body.taskUid, 60000)).status).toBe('succeeded');
    // Deleted documents leave holes in the internal ids.
    const gone = docs.filter((d) => d.id % 7 === 0).map((d) => d.id);
    const del = await s.api('POST', `/indexes/${uid}/documents/delete-batch`, { body: gone });
    expect((await s.waitTask(del.body.taskUid, 60000)).status).toBe('succeeded');
    kept = docs.filter((d) => d.id % 7 !== 0);
  });
  const search = (body: unknown) => s.api('POST', `/indexes/${uid}/search`, { body });

  async function idsOf(filter: string): Promise<number[]> {
    const r = await search({ filter, limit: 6000, attributesToRetrieve: ['id'] });
    expect(r.status).toBe(200);
    expect(r.body.estimatedTotalHits).toBe(r.body.hits.length);
    return r.body.hits.map((h: { id: number }) => h.id).sort((a: number, b: number) => a - b);
  }

  it('when ranges select few or many documents, then they are exactly those whose numbers pass', async () => {
    const cases: [string, (n: number) => boolean][] = [
      ['n >= 0', (n) => n >= 0],
      ['n > 0', (n) => n > 0],
      ['n <= 0', (n) => n <= 0],
      ['n < -20.5', (n) => n < -20.5],
      ['n >= -20.5', (n) => n >= -20.5],
      ['n 10 TO 20', (n) => n >= 10 && n <= 20],
      ['n 0 TO 0', (n) => n === 0],
      ['n 39 TO 39.5', (n) => n >= 39 && n <= 39.5],
      ['n > 99.5', (n) => n > 99.5],
      ['n = 0', (n) => n === 0],
      ['n = 5.5', (n) => n === 5.5],
      ['n > 1000', (n) => n > 1000],
      ['NOT n < 50', (n) => !(n < 50)],
    ];
    let selected = 0;
    for (const [filter, pass] of cases) {
      // `NOT` keeps documents without numbers too.
      const negated = filter.startsWith('NOT');
      const want = kept
        .filter((d) => (negated ? !numbersOf(d).some((n) => n < 50) : numbersOf(d).some(pass)))
        .map((d) => d.id);
      expect({ filter, ids: await idsOf(filter) }).toEqual({ filter, ids: want });
      selected += want.length;
    }
    expect(selected).toBeGreaterThan(10000);
  });

  it('when facets count every document, then counts, order and stats are the documents’ own', async () => {
    const r = await search({ facets: ['n', 'g'], limit: 0 });
    expect(r.status).toBe(200);
    const numbers = countNumbers(kept);
    // More than 3000 candidates: numbers in numeric order, then strings, 100 values in all.
    const want: Record<string, number> = {};
    for (const n of [...numbers.keys()].sort((a, b) => a - b).slice(0, 100)) want[String(n)] = numbers.get(n)!;
    expect(r.body.facetDistribution.n).toEqual(want);
    const order = [...numbers.keys()]
      .sort((a, b) => a - b)
      .slice(0, 5)
      .map((n) => `"${n}":${numbers.get(n)}`);
    expect(r.text).toContain(`"n":{${order.join(',')},`);
    const all = [...numbers.keys()];
    expect(r.body.facetStats.n).toEqual({ min: Math.min(...all), max: Math.max(...all) });
    const strings = new Map<string, number>();
    for (const d of kept) for (const g of new Set(stringsOf(d))) strings.set(g, (strings.get(g) ?? 0) + 1);
    const lower = Object.fromEntries(
      Object.entries(r.body.facetDistribution.g as Record<string, number>).map(([k, v]) => [k.toLowerCase(), v]),
    );
    expect(lower).toEqual(Object.fromEntries(strings));
  });

  it('when facets are ordered by count or capped, then the first values are the most frequent', async () => {
    const set = await s.api('PATCH', `/indexes/${uid}/settings`, {
      body: { faceting: { sortFacetValuesBy: { '*': 'count' }, maxValuesPerFacet: 7 } },
    });
    expect((await s.waitTask(set.body.taskUid, 60000)).status).toBe('succeeded');
    const r = await search({ facets: ['n'], limit: 0 });
    const numbers = [...countNumbers(kept).entries()].sort((a, b) => b[1] - a[1] || b[0] - a[0]).slice(0, 7);
    expect(r.text).toContain(`"n":{${numbers.map(([n, c]) => `"${n}":${c}`).join(',')}}`);
    // A filter keeping most documents, not all: counted over exactly those.
    const f = await search({ facets: ['n'], filter: 'n != 3', limit: 0 });
    const rest = kept.filter((d) => !numbersOf(d).includes(3));
    const counts = [...countNumbers(rest).entries()].sort((a, b) => b[1] - a[1] || b[0] - a[0]).slice(0, 7);
    expect(f.text).toContain(`"n":{${counts.map(([n, c]) => `"${n}":${c}`).join(',')}}`);
  });
});
