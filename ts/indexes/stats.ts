/**
 * The IndexStats object shared by `/stats` and `/indexes/{uid}/stats`, and the query both take.
 * With `sizeFormat=human` every size in bytes (the database's, the documents', the average
 * document's and each internal database's) is a string in binary units, as Meilisearch writes
 * them: `237 B`, `4 KiB`, `1.33 KiB`, `16.27 MiB` (two decimals at most, trailing zeros dropped).
 * Counts stay numbers.
 */
import type { Deps } from '../deps';
import type { IndexStats } from '../native';
import { boolParam, inRequestOrder, stringParam } from '../schemas/query';
import { ApiError } from '../errors/api-error';

export interface StatsQuery {
  human: boolean;
  internal: boolean;
}

export function parseStatsQuery(query: Record<string, unknown>): StatsQuery {
  inRequestOrder(query, ['showInternalDatabaseSizes', 'sizeFormat'], readStatsQuery);
  return readStatsQuery(query);
}

function readStatsQuery(query: Record<string, unknown>): StatsQuery {
  const internal = boolParam(query, 'showInternalDatabaseSizes', 'invalid_stats_show_internal_database_sizes', false);
  const fmt = stringParam(query, 'sizeFormat', 'invalid_stats_size_format') ?? 'raw';
  if (fmt !== 'raw' && fmt !== 'human') {
    throw new ApiError(
      'invalid_stats_size_format',
      `Unknown value \`${fmt}\` for parameter \`sizeFormat\`: expected one of \`human\`, \`raw\``,
    );
  }
  return { human: fmt === 'human', internal };
}

const BINARY_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];

/** `n` bytes in the largest binary unit it reaches, rounded to two decimals: `1357` is `1.33 KiB`. */
export function humanSize(n: number): string {
  let unit = 0;
  let v = n;
  while (v >= 1024 && unit < BINARY_UNITS.length - 1) {
    v /= 1024;
    unit++;
  }
  return `${unit === 0 ? v : Number(v.toFixed(2))} ${BINARY_UNITS[unit]}`;
}

/** A size as the query asks for it: bytes, or {@link humanSize}. */
export function sizeOf(q: StatsQuery, n: number): number | string {
  return q.human ? humanSize(n) : n;
}

export function statsOf(deps: Deps, uid: string, q: StatsQuery): { raw: IndexStats; view: Record<string, unknown> } {
  const s = deps.registry.handle(uid).stats();
  const size = (n: number) => sizeOf(q, n);
  const view: Record<string, unknown> = {
    numberOfDocuments: s.numberOfDocuments,
    rawDocumentDbSize: size(s.rawDocumentDbSize),
    avgDocumentSize: size(s.avgDocumentSize),
    isIndexing: deps.queue.isIndexing(uid),
    ...(q.internal ? { internalDatabaseSizes: {} } : {}),
    numberOfEmbeddings: s.numberOfEmbeddings,
    numberOfEmbeddedDocuments: s.numberOfEmbeddedDocuments,
    fieldDistribution: s.fieldDistribution,
  };
  if (q.internal)
    view.internalDatabaseSizes = Object.fromEntries(
      Object.entries(s.internalDatabaseSizes).map(([k, v]) => [k, size(v)]),
    );
  return { raw: s, view };
}
