/** Index CRUD, swap and per-index stats. */
import { Router } from 'express';
import { z } from 'zod';
import { compactIndex, createIndex, deleteIndex, swapIndexes, updateIndex } from '../commands/indexes';
import type { Deps } from '../deps';
import { ApiError } from '../errors/api-error';
import { parseWith } from '../errors/from-zod';
import { readJson } from '../http/body';
import { indexPage, indexView, notFound } from '../indexes/registry';
import { checkBodyIndexUid, checkIndexUid, checkSwaps } from '../schemas/indexes';
import { primaryKeyName } from '../schemas/limits';
import { rejectUnknownParams, uintParam } from '../schemas/query';
import { summaryView } from '../tasks/queue';
import { requireIndexAccess } from './access';
import { parseStatsQuery, statsOf } from '../indexes/stats';

export const CreateSchema = z.strictObject({ uid: z.unknown(), primaryKey: primaryKeyName.nullable().optional() });
export const UpdateSchema = z.strictObject({
  primaryKey: primaryKeyName.nullable().optional(),
  uid: z.unknown().optional(),
});

export function indexRoutes(deps: Deps): Router {
  const r = Router();
  const { guard, registry } = deps;

  r.get('/indexes', guard('indexes.get'), (req, res) => {
    const q = req.query as Record<string, unknown>;
    rejectUnknownParams(q, ['offset', 'limit']);
    const offset = uintParam(q, 'offset', 'invalid_index_offset', 0);
    const limit = uintParam(q, 'limit', 'invalid_index_limit', 20);
    res.json(indexPage(registry, req.auth!.canSeeIndex, offset, limit));
  });

  r.post('/indexes', guard('indexes.create'), async (req, res) => {
    const body = readJson(req);
    if (body !== null && typeof body === 'object' && !Array.isArray(body) && !('uid' in body)) {
      throw new ApiError('missing_index_uid', 'Missing field `uid`');
    }
    const parsed = parseWith(CreateSchema, body, { uid: 'invalid_index_uid', primaryKey: 'invalid_index_primary_key' });
    const uid = checkBodyIndexUid(parsed.uid, '.uid', true);
    requireIndexAccess(req, uid);
    const primaryKey = parsed.primaryKey ?? null;
    res.status(202).json(summaryView(await createIndex(deps, uid, primaryKey)));
  });

  r.get('/indexes/:indexUid', guard('indexes.get', 'param'), (req, res) => {
    const uid = checkIndexUid(req.params.indexUid);
    const e = registry.get(uid);
    if (!e) throw notFound(uid);
    res.json(indexView(e));
  });

  r.patch('/indexes/:indexUid', guard('indexes.update', 'param'), async (req, res) => {
    const parsed = parseWith(UpdateSchema, readJson(req), {
      primaryKey: 'invalid_index_primary_key',
      uid: 'invalid_index_uid',
    });
    const uid = checkIndexUid(req.params.indexUid);
    const newUid =
      parsed.uid === undefined || parsed.uid === null ? null : checkBodyIndexUid(parsed.uid, '.uid', false);
    const primaryKey = parsed.primaryKey ?? null;
    if (newUid !== null && newUid !== uid) requireIndexAccess(req, newUid);
    res.status(202).json(summaryView(await updateIndex(deps, uid, primaryKey, newUid)));
  });

  r.delete('/indexes/:indexUid', guard('indexes.delete', 'param'), async (req, res) => {
    const uid = checkIndexUid(req.params.indexUid);
    res.status(202).json(summaryView(await deleteIndex(deps, uid)));
  });

  /** Compaction: the index's inverted index merged into one segment, as a task. */
  r.post('/indexes/:indexUid/compact', guard('indexes.compact', 'param'), async (req, res) => {
    const uid = checkIndexUid(req.params.indexUid);
    res.status(202).json(summaryView(await compactIndex(deps, uid)));
  });

  r.get('/indexes/:indexUid/stats', guard('stats.get', 'param'), (req, res) => {
    const q = parseStatsQuery(req.query as Record<string, unknown>);
    const uid = checkIndexUid(req.params.indexUid);
    if (!registry.has(uid)) throw notFound(uid);
    res.json(statsOf(deps, uid, q).view);
  });

  r.post('/swap-indexes', guard('indexes.swap'), async (req, res) => {
    res.status(202).json(
      summaryView(
        await swapIndexes(
          deps,
          checkSwaps(readJson(req), (uid) => requireIndexAccess(req, uid)),
        ),
      ),
    );
  });

  return r;
}
