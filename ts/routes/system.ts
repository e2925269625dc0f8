/** Health, version, instance stats and experimental features. */
import { Router } from 'express';
import { updateExperimentalFeatures } from '../commands/features';
import type { Deps } from '../deps';
import { readJson } from '../http/body';
import { engineVersion, type IndexStats } from '../native';
import { databaseSizes } from '../store/sizes';
import { rejectUnknownParams } from '../schemas/query';
import { parseStatsQuery, sizeOf, statsOf } from '../indexes/stats';

export function systemRoutes(deps: Deps): Router {
  const r = Router();
  const { guard } = deps;

  r.get('/health', (_req, res) => {
    if (deps.compaction.mustRestart) {
      res.status(500).json({ status: 'mustRestart' });
      return;
    }
    // A replicated instance that cannot reach its log still answers reads: degraded, with why.
    const reason = deps.replica?.health() ?? null;
    res.json(reason === null ? { status: 'available' } : { status: 'degraded', reason });
  });

  r.get('/version', guard('version'), (_req, res) => {
    res.json({ commitSha: 'unknown', commitDate: 'unknown', pkgVersion: engineVersion() });
  });

  r.get('/stats', guard('stats.get'), (req, res) => {
    const q = parseStatsQuery(req.query as Record<string, unknown>);
    let lastUpdate: string | null = null;
    const indexes: Record<string, unknown> = {};
    const raws: IndexStats[] = [];
    for (const e of deps.registry.list()) {
      const s = statsOf(deps, e.uid, q);
      raws.push(s.raw);
      if (!req.auth!.canSeeIndex(e.uid)) continue;
      if (lastUpdate === null || e.updatedAt > lastUpdate) lastUpdate = e.updatedAt;
      indexes[e.uid] = s.view;
    }
    const sizes = databaseSizes(deps.kv, raws);
    res.json({ databaseSize: sizeOf(q, sizes.size), usedDatabaseSize: sizeOf(q, sizes.used), lastUpdate, indexes });
  });

  r.get('/experimental-features', guard('experimental.get'), (req, res) => {
    rejectUnknownParams(req.query as Record<string, unknown>, []);
    res.json(deps.features.get());
  });

  r.patch('/experimental-features', guard('experimental.update'), async (req, res) => {
    res.json(await updateExperimentalFeatures(deps, readJson(req)));
  });

  return r;
}
