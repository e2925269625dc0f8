/**
 * Geo over HTTP: `_geo` validation at indexing, radius and bounding box near the poles and
 * the antimeridian, `_geoPolygon` on `_geojson` shapes. Issue 4.
 */
import { startTestServer, type TestServer, uniqueIndex } from '../helpers/server';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

async function index(settings: Record<string, unknown>, docs: unknown[]): Promise<{ uid: string; task: any }> {
  const uid = uniqueIndex('geo');
  let r = await s.api('PATCH', `/indexes/${uid}/settings`, { body: settings });
  expect((await s.waitTask(r.body.taskUid)).status).toBe('succeeded');
  r = await s.api('POST', `/indexes/${uid}/documents`, { body: docs });
  return { uid, task: await s.waitTask(r.body.taskUid) };
}

const ids = (hits: { id: number }[]) => hits.map((h) => h.id);

describe('_geo validation', () => {
  const cases: [unknown, string][] = [
    [
      'Paris',
      'The `_geo` field in the document with the id: `1` is not an object. Was expecting an object with the `_geo.lat` and `_geo.lng` fields but instead got `"Paris"`.',
    ],
    [
      {},
      'Could not find latitude nor longitude in the document with the id: `1`. Was expecting `_geo.lat` and `_geo.lng` fields.',
    ],
    [{ lat: 1 }, 'Could not find longitude in the document with the id: `1`. Was expecting a `_geo.lng` field.'],
    [{ lng: 1 }, 'Could not find latitude in the document with the id: `1`. Was expecting a `_geo.lat` field.'],
    [
      { lat: 'north', lng: 2 },
      'Could not parse latitude in the document with the id: `1`. Was expecting a finite number but instead got `"north"`.',
    ],
    [
      { lat: 1, lng: true },
      'Could not parse longitude in the document with the id: `1`. Was expecting a finite number but instead got `true`.',
    ],
    [
      { lat: null, lng: [] },
      'Could not parse latitude nor longitude in the document with the id: `1`. Was expecting finite numbers but instead got `null` and `[]`.',
    ],
    [
      { lat: 1, lng: 2, alt: 3 },
      'The `_geo` field in the document with the id: `1` contains the following unexpected fields: `{"alt":3}`.',
    ],
  ];
  it.each(cases)('when _geo is %j, then the task fails with invalid_document_geo_field', async (geo, message) => {
    const { uid, task } = await index({ filterableAttributes: ['_geo'] }, [{ id: 1, _geo: geo }]);
    expect(task.status).toBe('failed');
    expect(task.error.code).toBe('invalid_document_geo_field');
    expect(task.error.message).toBe(message);
    // Nothing of the batch was stored.
    expect((await s.api('GET', `/indexes/${uid}/documents/1`)).status).toBe(404);
  });

  it('when lat/lng are numeric strings or _geo is null, then the document is accepted', async () => {
    const { task } = await index({ sortableAttributes: ['_geo'] }, [
      { id: 'a', _geo: { lat: '45.5', lng: ' -73.6 ' } },
      { id: 'b', _geo: null },
    ]);
    expect(task.status).toBe('succeeded');
  });

  it('when _geo is neither filterable nor sortable, then it is not checked', async () => {
    const { task } = await index({ filterableAttributes: ['x'] }, [{ id: 1, _geo: 'anything' }]);
    expect(task.status).toBe('succeeded');
  });

  it('when the id is a string, then the message shows it as JSON', async () => {
    const { task } = await index({ filterableAttributes: ['_geo'] }, [{ id: 'x1', _geo: {} }]);
    expect(task.error.message).toBe(
      'Could not find latitude nor longitude in the document with the id: `"x1"`. Was expecting `_geo.lat` and `_geo.lng` fields.',
    );
  });
});

describe('radius and box at the edges of the map', () => {
  let uid: string;
  beforeAll(async () => {
    const r = await index({ filterableAttributes: ['_geo'] }, [
      { id: 1, _geo: { lat: 0, lng: 179.9 } },
      { id: 2, _geo: { lat: 0, lng: -179.9 } },
      { id: 3, _geo: { lat: 89.99, lng: 0 } },
      { id: 4, _geo: { lat: 89.99, lng: 180 } },
      { id: 5, _geo: { lat: -89.99, lng: 45 } },
      { id: 6, _geo: { lat: 0, lng: 0 } },
    ]);
    expect(r.task.status).toBe('succeeded');
    uid = r.uid;
  });
  const search = (filter: string) => s.api('POST', `/indexes/${uid}/search`, { body: { filter } });

  it('when a radius crosses the antimeridian, then both sides match', async () => {
    expect(ids((await search('_geoRadius(0, 180, 30000)')).body.hits)).toEqual([1, 2]);
  });

  it('when a radius is around a pole, then every longitude near it matches', async () => {
    expect(ids((await search('_geoRadius(90, 0, 5000)')).body.hits)).toEqual([3, 4]);
    expect(ids((await search('_geoRadius(-90, -120, 5000)')).body.hits)).toEqual([5]);
  });

  it('when a box wraps the antimeridian (right < left), then it spans it', async () => {
    expect(ids((await search('_geoBoundingBox([10, -179], [-10, 179])')).body.hits)).toEqual([1, 2]);
    expect(ids((await search('_geoBoundingBox([10, 10], [-10, -10])')).body.hits)).toEqual([6]);
    expect(ids((await search('_geoBoundingBox([90, 180], [80, -180])')).body.hits)).toEqual([3, 4]);
  });
});

describe('_geoPolygon on _geojson', () => {
  const shapes = [
    { id: 1, _geojson: { type: 'Point', coordinates: [2.35, 48.85] } },
    {
      id: 2,
      _geojson: {
        type: 'Feature',
        geometry: { type: 'Point', coordinates: [4.83, 45.76] },
        properties: { city: 'Lyon' },
      },
    },
    {
      id: 3,
      _geojson: {
        type: 'LineString',
        coordinates: [
          [-10, 46],
          [10, 46],
        ],
      },
    },
    {
      id: 4,
      _geojson: {
        type: 'Polygon',
        coordinates: [
          [
            [20, 20],
            [30, 20],
            [30, 30],
            [20, 20],
          ],
        ],
      },
    },
    { id: 5, title: 'no shape' },
  ];

  it('when a polygon is given, then shapes intersecting it match', async () => {
    const { uid, task } = await index({ filterableAttributes: ['_geojson'] }, shapes);
    expect(task.status).toBe('succeeded');
    // Around France: lat 42..51, lng -5..8.
    const r = await s.api('POST', `/indexes/${uid}/search`, {
      body: { filter: '_geoPolygon([51, -5], [51, 8], [42, 8], [42, -5])' },
    });
    expect(r.status).toBe(200);
    expect(ids(r.body.hits)).toEqual([1, 2, 3]);
    const not = await s.api('POST', `/indexes/${uid}/search`, {
      body: { filter: 'NOT _geoPolygon([51, -5], [51, 8], [42, 8], [42, -5])' },
    });
    expect(ids(not.body.hits)).toEqual([4, 5]);
  });

  it('when _geojson is filterable, then _geoRadius and _geoBoundingBox match shapes, and _geo points when _geo is too', async () => {
    const docs = [
      { id: 1, _geojson: { type: 'Point', coordinates: [2.35, 48.85] } },
      { id: 2, _geo: { lat: 48.86, lng: 2.34 } },
      { id: 3, _geo: { lat: 45.0, lng: 5.0 }, _geojson: { type: 'Point', coordinates: [2.36, 48.84] } },
      {
        id: 4,
        _geojson: {
          type: 'Polygon',
          coordinates: [
            [
              [2.0, 48.0],
              [3.0, 48.0],
              [3.0, 49.0],
              [2.0, 49.0],
              [2.0, 48.0],
            ],
          ],
        },
      },
      { id: 5, _geojson: { type: 'Point', coordinates: [100, 10] } },
    ];
    const radius = '_geoRadius(48.85, 2.35, 5000)';
    const box = '_geoBoundingBox([48.9, 2.4], [48.8, 2.3])';
    const found = async (uid: string, filter: string) => {
      const r = await s.api('POST', `/indexes/${uid}/search`, { body: { filter } });
      expect(r.status).toBe(200);
      return ids(r.body.hits).sort();
    };
    const shapes = await index({ filterableAttributes: ['_geojson'] }, docs);
    expect(shapes.task.status).toBe('succeeded');
    expect(await found(shapes.uid, radius)).toEqual([1, 3, 4]);
    expect(await found(shapes.uid, box)).toEqual([1, 3, 4]);
    expect(await found(shapes.uid, `NOT ${radius}`)).toEqual([2, 5]);
    // A circle of 10 m inside the polygon meets it; its resolution is the circle's vertices.
    expect(await found(shapes.uid, '_geoRadius(48.5, 2.5, 10, 16)')).toEqual([4]);
    const both = await index({ filterableAttributes: ['_geo', '_geojson'] }, docs);
    expect(await found(both.uid, radius)).toEqual([1, 2, 3, 4]);
    expect(await found(both.uid, `NOT ${box}`)).toEqual([5]);
    const points = await index({ filterableAttributes: ['_geo'] }, docs);
    expect(await found(points.uid, radius)).toEqual([2]);
  });

  it('when a query holds what _geo or _geojson hold, then they are not searched as words', async () => {
    const { uid } = await index({ filterableAttributes: ['_geo', '_geojson'] }, [
      { id: 'a', _geo: { lat: 48.86, lng: 2.34 } },
      { id: 'b', _geojson: { type: 'Point', coordinates: [2.35, 48.85] } },
      { id: 'c', other: { type: 'Point', lat: 48.86 } },
    ]);
    for (const [q, expected] of [
      ['point', ['c']],
      ['48.86', ['c']],
      ['lat', []],
    ] as const) {
      const r = await s.api('POST', `/indexes/${uid}/search`, { body: { q } });
      expect(r.body.hits.map((h: { id: string }) => h.id)).toEqual(expected);
    }
  });

  it('when _geojson is not filterable, then the filter names it', async () => {
    const { uid } = await index({ filterableAttributes: ['_geo'] }, [{ id: 1 }]);
    const r = await s.api('POST', `/indexes/${uid}/search`, {
      body: { filter: '_geoPolygon([1, 1], [1, 2], [2, 2])' },
    });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_search_filter');
    expect(r.body.message).toContain('Attribute `_geojson` is not filterable.');
  });

  it('when a _geojson value is not GeoJSON, then the task fails with invalid_document_geojson_field', async () => {
    const { task } = await index({ filterableAttributes: ['_geojson'] }, [
      { id: 1, _geojson: { type: 'Circle', coordinates: [1, 2] } },
    ]);
    expect(task.status).toBe('failed');
    expect(task.error.code).toBe('invalid_document_geojson_field');
  });
});
