/** Single-index search: validate, one engine call, send the engine's JSON bytes as they are. */
import { type Request, type Response, Router } from 'express';
import type { Deps } from '../deps';
import { readJson } from '../http/body';
import { checkIndexUid } from '../schemas/indexes';
import { engineQuery, parseSearch, searchQueryFromParams } from '../schemas/search';

export function searchRoutes(deps: Deps): Router {
  const r = Router();
  const { guard, registry } = deps;

  async function run(req: Request, res: Response, body: unknown): Promise<void> {
    const uid = checkIndexUid(req.params.indexUid);
    const query = parseSearch(body);
    const index = registry.handle(uid);
    res.status(200).type('application/json').send(await index.search(engineQuery(query)));
  }

  r.post('/indexes/:indexUid/search', guard('search', 'param'), (req, res) => run(req, res, readJson(req, true)));
  r.get('/indexes/:indexUid/search', guard('search', 'param'), (req, res) => run(req, res, searchQueryFromParams(req.query as Record<string, unknown>)));

  return r;
}
