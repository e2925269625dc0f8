/** Query parameters of the tasks and batches routes. */
import { ApiError } from '../errors/api-error';
import type { TaskFilter } from '../tasks/filter';
import { TASK_STATUSES, TASK_TYPES } from '../tasks/types';
import { parseDateFilter } from '../util/time';
import { isValidIndexUid, invalidIndexUidMessage } from './indexes';
import { boolParam, inRequestOrder, listParam, type Query, uintParam } from './query';

// Meilisearch's order, which its error for an unknown parameter lists.
const FILTER_PARAMS = [
  'batchUids',
  'uids',
  'canceledBy',
  'types',
  'statuses',
  'indexUids',
  'afterEnqueuedAt',
  'beforeEnqueuedAt',
  'afterStartedAt',
  'beforeStartedAt',
  'afterFinishedAt',
  'beforeFinishedAt',
] as const;

export const LIST_PARAMS = ['limit', 'from', 'reverse', ...FILTER_PARAMS];
/** The filters of a cancelation or a deletion, in Meilisearch's order for them (`uids` first). */
const CANCEL_DELETE_PARAMS = ['uids', 'batchUids', ...FILTER_PARAMS.filter((p) => p !== 'uids' && p !== 'batchUids')];

function uidSet(query: Query, name: string, code: string, what: string): Set<number> | undefined {
  const list = listParam(query, name, code);
  if (!list || list.includes('*')) return undefined;
  const out = new Set<number>();
  for (const v of list) {
    if (!/^\d+$/.test(v) || Number(v) > 0xffffffff) {
      throw new ApiError(
        code,
        `Invalid value in parameter \`${name}\`: could not parse \`${v}\` as a positive integer`,
      );
    }
    out.add(Number(v));
  }
  void what;
  return out;
}

function enumSet(
  query: Query,
  name: string,
  code: string,
  valid: readonly string[],
  what: string,
): Set<string> | undefined {
  const list = listParam(query, name, code);
  if (!list || list.includes('*')) return undefined;
  const out = new Set<string>();
  for (const v of list) {
    const hit = valid.find((x) => x.toLowerCase() === v.toLowerCase());
    if (!hit) {
      throw new ApiError(
        code,
        `Invalid value in parameter \`${name}\`: \`${v}\` is not a valid ${what}. Available ${name} are ${valid.map((x) => `\`${x}\``).join(', ')}.`,
      );
    }
    out.add(hit);
  }
  return out;
}

function dateParam(query: Query, name: string, isAfter: boolean): bigint | undefined {
  const code = `invalid_task_${name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`;
  const list = listParam(query, name, code);
  if (!list) return undefined;
  const v = list.join(',');
  if (v === '*') return undefined;
  const t = parseDateFilter(v, isAfter);
  if (t === null) {
    throw new ApiError(
      code,
      `Invalid value in parameter \`${name}\`: \`${v}\` is an invalid date-time. It should follow the YYYY-MM-DD or RFC 3339 date-time format.`,
    );
  }
  return t;
}

export function parseTaskFilter(query: Query): TaskFilter {
  const f: TaskFilter = {};
  f.uids = uidSet(query, 'uids', 'invalid_task_uids', 'uid');
  f.batchUids = uidSet(query, 'batchUids', 'invalid_batch_uids', 'uid');
  f.canceledBy = uidSet(query, 'canceledBy', 'invalid_task_canceled_by', 'uid');
  f.types = enumSet(query, 'types', 'invalid_task_types', TASK_TYPES, 'task type');
  f.statuses = enumSet(query, 'statuses', 'invalid_task_statuses', TASK_STATUSES, 'task status');
  const indexUids = listParam(query, 'indexUids', 'invalid_index_uid');
  if (indexUids && !indexUids.includes('*')) {
    for (const uid of indexUids) {
      if (!isValidIndexUid(uid))
        throw new ApiError(
          'invalid_index_uid',
          `Invalid value in parameter \`indexUids\`: ${invalidIndexUidMessage(uid)}`,
        );
    }
    f.indexUids = new Set(indexUids);
  }
  f.afterEnqueuedAt = dateParam(query, 'afterEnqueuedAt', true);
  f.beforeEnqueuedAt = dateParam(query, 'beforeEnqueuedAt', false);
  f.afterStartedAt = dateParam(query, 'afterStartedAt', true);
  f.beforeStartedAt = dateParam(query, 'beforeStartedAt', false);
  f.afterFinishedAt = dateParam(query, 'afterFinishedAt', true);
  f.beforeFinishedAt = dateParam(query, 'beforeFinishedAt', false);
  return f;
}

export interface ListQuery {
  filter: TaskFilter;
  limit: number;
  from: number | null;
  reverse: boolean;
}

export function parseListQuery(query: Query): ListQuery {
  inRequestOrder(query, LIST_PARAMS, readListQuery);
  return readListQuery(query);
}

function readListQuery(query: Query): ListQuery {
  const filter = parseTaskFilter(query);
  const limit = uintParam(query, 'limit', 'invalid_task_limit', 20);
  const from = query.from === undefined ? null : uintParam(query, 'from', 'invalid_task_from', 0);
  const reverse = boolParam(query, 'reverse', 'invalid_task_reverse', false);
  return { filter, limit, from, reverse };
}

/** Filters of `POST /tasks/cancel` and `DELETE /tasks`; at least one is required. */
export function parseCancelOrDeleteQuery(query: Query, action: 'cancel' | 'delete'): TaskFilter {
  inRequestOrder(query, CANCEL_DELETE_PARAMS, parseTaskFilter);
  const present = FILTER_PARAMS.filter((p) => query[p] !== undefined);
  if (present.length === 0) {
    throw new ApiError(
      'missing_task_filters',
      `Query parameters to filter the tasks to ${action} are missing. Available query parameters are: \`uids\`, \`indexUids\`, \`statuses\`, \`types\`, \`canceledBy\`, \`beforeEnqueuedAt\`, \`afterEnqueuedAt\`, \`beforeStartedAt\`, \`afterStartedAt\`, \`beforeFinishedAt\`, \`afterFinishedAt\`.`,
    );
  }
  return parseTaskFilter(query);
}
