/**
 * Every error code written anywhere in the sources is a code of the one table.
 *
 * Rust raises codes as variants of `api_types::Code`, an enum declared by the table's rows, so
 * a misspelled code there does not compile; the scan below only checks that no Rust source
 * outside the table spells a code as a string again. TypeScript writes codes as plain
 * snake_case literals (`new ApiError('index_not_found', ..)`, `errorBody(..)`, zod field → code
 * maps and `match` arms alike), so the scan takes every snake_case literal of `ts/` outside
 * comments and requires it to be in `errorCatalog()`, unless it is one of the few literals
 * below that are not codes. Codes built from a template (`invalid_search_${..}`) are checked
 * through their prefix, and the maps that templates build are checked at run time.
 */
import fs from 'node:fs';
import path from 'node:path';
import { catalogByCode } from '../../ts/native';
import { SEARCH_CODES } from '../../ts/schemas/search';

const ROOT = path.resolve(__dirname, '../..');

/** Snake_case literals that are not error codes, each with where it comes from. */
const NOT_CODES = new Set([
  // TS: an error type (not a code) in the OpenAPI document, and a Liquid variable the chat's
  // document template reads.
  'invalid_request',
  'is_searchable',
  // TS: zod issue kinds read in ts/errors/from-zod.ts.
  'invalid_type',
  'invalid_value',
  'unrecognized_keys',
  // TS: a field name in a message, a feature name in a message, a directory name.
  'expires_at',
  'foreign_keys',
  'render_route',
  'update_files',
  // TS: the chat completions' event and provider failure names (ts/chats/), and a metric label.
  'response_error',
  'tool_calls',
  'transport_error',
  'reqwest_error',
  'stream_ended',
  'json_deserialize_error',
  'workspace_uid',
  // TS: names of the MCP endpoint's tools (ts/mcp/tools.ts).
  'list_indexes',
  'get_documents',
  'get_settings',
  // TS: route parameter and metric label names of `GET /metrics` (ts/metrics/).
  'index_uid',
  'document_id',
  'task_id',
  'batch_id',
  'batch_uid',
  'step_name',
]);

/** Prometheus metric family names (ts/metrics/) are wire names, not codes. */
const METRIC_FAMILY = /^(meilisearch|process)_/;

/** The table itself holds every code: it is scanned on its own, to guard the scan. */
const TABLE = path.join('crates', 'api-types', 'src', 'table.rs');
const SKIP = new Set([TABLE]);

function files(dir: string, ext: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'target' && e.name !== 'node_modules' && e.name !== 'fuzz') out.push(...files(rel, ext));
    } else if (e.name.endsWith(ext) && !SKIP.has(rel)) {
      out.push(rel);
    }
  }
  return out;
}

/** Comment lines and Rust attributes hold names, not codes. */
function isCodeLine(line: string): boolean {
  const t = line.trim();
  return !(t.startsWith('//') || t.startsWith('*') || t.startsWith('/*') || t.startsWith('#['));
}

interface Found {
  literals: Map<string, string>;
  prefixes: Map<string, string>;
}

function scan(dir: string, ext: string, only?: string[]): Found {
  const literal = ext === '.rs' ? /"([a-z][a-z0-9]*(?:_[a-z0-9]+)+)"/g : /['"`]([a-z][a-z0-9]*(?:_[a-z0-9]+)+)['"`]/g;
  const prefix = /`([a-z][a-z0-9]*(?:_[a-z0-9]+)*_)\$\{/g;
  const found: Found = { literals: new Map(), prefixes: new Map() };
  for (const file of only ?? files(dir, ext)) {
    fs.readFileSync(path.join(ROOT, file), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (!isCodeLine(line)) return;
        const where = `${file}:${i + 1}`;
        for (const m of line.matchAll(literal)) if (!found.literals.has(m[1])) found.literals.set(m[1], where);
        for (const m of line.matchAll(prefix)) if (!found.prefixes.has(m[1])) found.prefixes.set(m[1], where);
      });
  }
  return found;
}

function unknown(found: Found): string[] {
  const catalog = catalogByCode();
  const codes = [...catalog.keys()];
  const bad: string[] = [];
  for (const [code, where] of found.literals) {
    if (!catalog.has(code) && !NOT_CODES.has(code) && !METRIC_FAMILY.test(code)) bad.push(`${code} (${where})`);
  }
  for (const [p, where] of found.prefixes) {
    if (!codes.some((c) => c.startsWith(p))) bad.push(`${p}* (${where})`);
  }
  return bad;
}

describe('error codes', () => {
  const rust = scan('crates', '.rs');
  const ts = scan('ts', '.ts');

  it('when the sources are scanned, then the scan finds the codes they use', () => {
    // Guards the scan itself: a broken pattern would otherwise pass vacuously.
    expect(ts.literals.has('index_not_found')).toBe(true);
    expect(ts.literals.size).toBeGreaterThan(50);
    // The same scan over the table finds its codes, so it would find one spelled elsewhere.
    const table = scan('crates', '.rs', [TABLE]);
    expect(table.literals.has('index_not_found')).toBe(true);
    expect(table.literals.size).toBeGreaterThan(250);
    expect(rust.literals.size).toBeGreaterThan(5);
  });

  it('when Rust raises an error, then it names a variant of the table, never a code string', () => {
    const catalog = catalogByCode();
    const spelled = [...rust.literals].filter(([code]) => catalog.has(code)).map(([c, w]) => `${c} (${w})`);
    expect(spelled).toEqual([]);
  });

  it('when TypeScript names an error code, then it is in the table', () => {
    expect(unknown(ts)).toEqual([]);
  });

  it('when a field-to-code map is built from a template, then each code is in the table', () => {
    const catalog = catalogByCode();
    expect(Object.values(SEARCH_CODES).filter((c) => !catalog.has(c))).toEqual([]);
  });

  it('when a literal is listed as not a code, then it is really not in the table', () => {
    const catalog = catalogByCode();
    expect([...NOT_CODES].filter((c) => catalog.has(c))).toEqual([]);
  });
});
