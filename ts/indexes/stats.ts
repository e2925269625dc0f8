/** The IndexStats object shared by `/stats` and `/indexes/{uid}/stats`. */
import type { Deps } from '../deps';
import { formatBytes } from '../http/body';
import type { IndexStats } from '../native';
import { boolParam, rejectUnknownParams, stringParam } from '../schemas/query';
import { ApiError } from '../errors/api-error';

export interface StatsQuery {
  human: boolean;
  internal: boolean;
}

export function parseStatsQuery(query: Record<string, unknown>): StatsQuery {
  rejectUnknownParams(query, ['showInternalDatabaseSizes', 'sizeFormat']);
  const internal = boolParam(query, 'showInternalDatabaseSizes', 'invalid_stats_show_internal_database_sizes', false);
  const fmt = stringParam(query, 'sizeFormat', 'invalid_stats_size_format') ?? 'raw';
  if (fmt !== 'raw' && fmt !== 'human') {
    throw new ApiError('invalid_stats_size_format', `Invalid value in parameter \`sizeFormat\`: unknown value \`${fmt}\`, expected one of \`raw\`, \`human\``);
  }
  return { human: fmt === 'human', internal };
}

export function statsOf(deps: Deps, uid: string, q: StatsQuery): { raw: IndexStats; view: Record<string, unknown> } {
  const s = deps.registry.handle(uid).stats();
  const size = (n: number) => (q.human ? formatBytes(n) : n);
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
  if (q.internal) view.internalDatabaseSizes = Object.fromEntries(Object.entries(s.internalDatabaseSizes).map(([k, v]) => [k, size(v)]));
  return { raw: s, view };
}
