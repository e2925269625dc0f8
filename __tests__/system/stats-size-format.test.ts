/**
 * r68: `GET /stats` and `GET /indexes/{uid}/stats` with `sizeFormat=human` (and
 * `showInternalDatabaseSizes=true`) write every size as Meilisearch 1.50 does, and refuse
 * invalid values of both parameters with its codes and messages. The byte/text pairs below are
 * what the reference server answered for sizes it reported.
 */
import { humanSize } from '../../ts/indexes/stats';
import { startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let s: TestServer;
let uid: string;

beforeAll(async () => {
  s = await startTestServer();
  uid = uniqueIndex('stats_human');
  const docs = Array.from({ length: 300 }, (_, i) => ({ id: i, title: `word${i} ${'x'.repeat(i % 97)}` }));
  await s.waitTask((await s.api('POST', `/indexes/${uid}/documents`, { body: docs })).body.taskUid);
});
afterAll(() => s.close());

/** Bytes as the reference wrote them with `sizeFormat=human`. */
const REFERENCE: Array<[number, string]> = [
  [0, '0 B'],
  [237, '237 B'],
  [1023, '1023 B'],
  [1024, '1 KiB'],
  [1357, '1.33 KiB'],
  [2150, '2.1 KiB'],
  [2557, '2.5 KiB'],
  [4088, '3.99 KiB'],
  [4096, '4 KiB'],
  [942080, '920 KiB'],
  [1060864, '1.01 MiB'],
  [5582848, '5.32 MiB'],
  [17055744, '16.27 MiB'],
  [17416192, '16.61 MiB'],
];

/** `text` is `bytes` written as the reference writes it (see the first test). */
function expectHuman(bytes: number, text: unknown): void {
  expect(typeof bytes).toBe('number');
  expect(text).toBe(humanSize(bytes));
}

/** Every size field of an IndexStats object, raw next to human. */
function expectIndexStats(raw: any, human: any): void {
  expect(Object.keys(human)).toEqual(Object.keys(raw));
  for (const k of [
    'numberOfDocuments',
    'isIndexing',
    'numberOfEmbeddings',
    'numberOfEmbeddedDocuments',
    'fieldDistribution',
  ])
    expect(human[k]).toEqual(raw[k]);
  expectHuman(raw.rawDocumentDbSize, human.rawDocumentDbSize);
  expectHuman(raw.avgDocumentSize, human.avgDocumentSize);
  if (raw.internalDatabaseSizes !== undefined) {
    expect(Object.keys(human.internalDatabaseSizes)).toEqual(Object.keys(raw.internalDatabaseSizes));
    for (const [k, v] of Object.entries(raw.internalDatabaseSizes))
      expectHuman(v as number, human.internalDatabaseSizes[k]);
  }
}

describe('GET /stats?sizeFormat=human', () => {
  it('when a size is written in human form, then it reads as the reference wrote it', () => {
    for (const [bytes, text] of REFERENCE) expect([bytes, humanSize(bytes)]).toEqual([bytes, text]);
  });

  it('when sizes are asked in human form, then every size of the instance and its indexes is a string', async () => {
    for (const internal of ['', '&showInternalDatabaseSizes=true']) {
      const raw = (await s.api('GET', `/stats?sizeFormat=raw${internal}`)).body;
      const human = await s.api('GET', `/stats?sizeFormat=human${internal}`);
      expect(human.status).toBe(200);
      expect(Object.keys(human.body)).toEqual(['databaseSize', 'usedDatabaseSize', 'lastUpdate', 'indexes']);
      expectHuman(raw.databaseSize, human.body.databaseSize);
      expectHuman(raw.usedDatabaseSize, human.body.usedDatabaseSize);
      expect(human.body.lastUpdate).toBe(raw.lastUpdate);
      expectIndexStats(raw.indexes[uid], human.body.indexes[uid]);
    }
  });

  it('when one index is asked, then its sizes are strings too', async () => {
    const raw = (await s.api('GET', `/indexes/${uid}/stats?showInternalDatabaseSizes=true`)).body;
    const human = (await s.api('GET', `/indexes/${uid}/stats?showInternalDatabaseSizes=true&sizeFormat=human`)).body;
    expect(typeof human.rawDocumentDbSize).toBe('string');
    expectIndexStats(raw, human);
  });

  it.each([['/stats'], ['/indexes/INDEX/stats']])(
    "when a parameter has an invalid value, then %s answers Meilisearch's code and message",
    async (route) => {
      const path = route.replace('INDEX', uid);
      for (const value of ['bytes', 'HUMAN', '']) {
        const r = await s.api('GET', `${path}?sizeFormat=${value}`);
        expect([r.status, r.body]).toEqual([
          400,
          {
            message: `Unknown value \`${value}\` for parameter \`sizeFormat\`: expected one of \`human\`, \`raw\``,
            code: 'invalid_stats_size_format',
            type: 'invalid_request',
            link: 'https://docs.meilisearch.com/errors#invalid_stats_size_format',
          },
        ]);
      }
      const r = await s.api('GET', `${path}?sizeFormat=human&showInternalDatabaseSizes=yes`);
      expect([r.status, r.body]).toEqual([
        400,
        {
          message:
            'Invalid value in parameter `showInternalDatabaseSizes`: could not parse `yes` as a boolean, expected either `true` or `false`',
          code: 'invalid_stats_show_internal_database_sizes',
          type: 'invalid_request',
          link: 'https://docs.meilisearch.com/errors#invalid_stats_show_internal_database_sizes',
        },
      ]);
    },
  );
});
