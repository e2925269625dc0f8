/**
 * A parameter accepted and then dropped is a silent approximation: every field the search,
 * facet search and similar bodies accept must reach the engine's query, or be one the service
 * handles itself (listed here, with where). Both hops are checked: the schema's fields against
 * the engine query TypeScript builds, and that query's fields against the engine's wire type
 * (`ts/native/shapes.generated.ts`, generated from the Rust struct serde reads, which ignores
 * fields it does not know).
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  engineQuery,
  FacetSearchSchema,
  facetEngineQuery,
  parseFacetSearch,
  parseSearch,
  SearchSchema,
} from '../../ts/schemas/search';
import { parseSimilar, SimilarSchema, similarEngineQuery } from '../../ts/schemas/similar';

/** Fields the service reads itself instead of the engine, and where. */
const HANDLED_IN_TYPESCRIPT: Record<string, string> = {
  personalize: 'ts/search/personalize.ts (reranks the engine answer)',
  useNetwork: 'ts/network/search.ts (asks the other instances)',
};

const SHAPES = fs.readFileSync(path.join(__dirname, '../../ts/native/shapes.generated.ts'), 'utf8');

/** The top-level field names of the generated type `name` (comments left out). */
function wireFields(name: string, text = SHAPES): string[] {
  const start = text.indexOf(`export type ${name} = {`);
  if (start < 0) throw new Error(`no type ${name}`);
  const body = text.slice(start + `export type ${name} = `.length).replace(/\/\*\*[\s\S]*?\*\//g, '');
  const fields: string[] = [];
  let depth = 0;
  let token = '';
  for (const ch of body) {
    if (ch === '{' || ch === '<' || ch === '(' || ch === '[') depth++;
    else if (ch === '}' || ch === '>' || ch === ')' || ch === ']') {
      depth--;
      if (depth === 0) break;
    } else if (depth === 1 && (ch === ':' || ch === '?')) {
      const key = token
        .replace(/^[\s{,]+/, '')
        .trim()
        .replace(/^"|"$/g, '');
      if (key && /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) && !fields.includes(key)) fields.push(key);
      token = '';
      continue;
    } else if (depth === 1 && ch === ',') {
      token = '';
      continue;
    }
    if (depth === 1) token += ch;
  }
  return fields;
}

const cases = [
  {
    name: 'search',
    schema: Object.keys(SearchSchema.shape),
    engine: Object.keys(engineQuery(parseSearch({}))),
    wire: wireFields('SearchQuery'),
  },
  {
    name: 'facet search',
    schema: Object.keys(FacetSearchSchema.shape),
    engine: Object.keys(facetEngineQuery(parseFacetSearch({ facetName: 'x' }), false)),
    wire: wireFields('FacetSearchQuery'),
  },
  {
    name: 'similar',
    schema: Object.keys(SimilarSchema.shape),
    engine: Object.keys(similarEngineQuery(parseSimilar({ id: 1, embedder: 'e' }), null, false)),
    wire: wireFields('SimilarQuery'),
  },
];

describe('request fields reach the engine', () => {
  it('when the generated wire type is read, then its fields are found (the reader is checked)', () => {
    expect(
      wireFields('T', 'export type T = { a: string, b?: Array<{ c: number }> | null, /** x: y */ "d"?: unknown, };'),
    ).toEqual(['a', 'b', 'd']);
    expect(wireFields('FacetSearchQuery')).toContain('rankingScoreThreshold');
  });

  it.each(cases)(
    'when a $name body is accepted, then each of its fields reaches the engine query or is handled in TypeScript',
    ({ schema, engine }) => {
      expect(schema.filter((k) => !engine.includes(k) && !(k in HANDLED_IN_TYPESCRIPT))).toEqual([]);
    },
  );

  it.each(cases)(
    'when the $name engine query is sent, then the engine reads each of its fields',
    ({ engine, wire }) => {
      expect(engine.filter((k) => !wire.includes(k))).toEqual([]);
    },
  );
});
