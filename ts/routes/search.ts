/** Search routes: HTTP in and out around the search service (`search/service.ts`). */
import { type Request, type Response, Router } from 'express';
import type { Deps } from '../deps';
import { ApiError } from '../errors/api-error';
import { readJson } from '../http/body';
import type { ResponseBudget } from '../http/response-budget';
import { arrivalOf } from '../http/observe';
import { DERIVATION_CANDIDATES_HEADER, FEDERATION_RUNS_HEADER } from '../native';
import { searchQueryFromParams } from '../schemas/search';
import { similarQueryFromParams } from '../schemas/similar';
import { METADATA_HEADER, wantsMetadata } from '../search/metadata';
import { SearchService } from '../search/service';

/**
 * Sends a search's bytes, held in the response budget until sent; a refusal of the search
 * limiter or of the budget carries `Retry-After: 10`.
 */
async function send(res: Response, budget: ResponseBudget, answer: Promise<Buffer>): Promise<void> {
  try {
    const bytes = await answer;
    budget.holdFor(res, bytes.length);
    res.status(200).type('application/json').send(bytes);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'too_many_search_requests') res.setHeader('Retry-After', '10');
    throw err;
  }
}

export function searchRoutes(deps: Deps, service = new SearchService(deps)): Router {
  const r = Router();
  const { guard } = deps;
  const params = (req: Request) => req.query as Record<string, unknown>;
  const metadata = (req: Request) => wantsMetadata(req.get(METADATA_HEADER));

  r.post('/indexes/:indexUid/search', guard('search', 'param'), (req, res) =>
    send(
      res,
      deps.responseBudget,
      service.search(req.auth!, req.params.indexUid, readJson(req), arrivalOf(req), metadata(req)),
    ),
  );
  r.get('/indexes/:indexUid/search', guard('search', 'param'), (req, res) =>
    send(
      res,
      deps.responseBudget,
      service.search(req.auth!, req.params.indexUid, searchQueryFromParams(params(req)), arrivalOf(req), metadata(req)),
    ),
  );
  r.post('/indexes/:indexUid/facet-search', guard('search', 'param'), (req, res) =>
    send(res, deps.responseBudget, service.facetSearch(req.auth!, req.params.indexUid, readJson(req))),
  );
  r.post('/indexes/:indexUid/similar', guard('search', 'param'), (req, res) =>
    send(res, deps.responseBudget, service.similar(req.auth!, req.params.indexUid, readJson(req), arrivalOf(req))),
  );
  r.get('/indexes/:indexUid/similar', guard('search', 'param'), (req, res) =>
    send(
      res,
      deps.responseBudget,
      service.similar(req.auth!, req.params.indexUid, similarQueryFromParams(params(req)), arrivalOf(req)),
    ),
  );
  r.post('/multi-search', guard('search', 'none'), (req, res) =>
    send(
      res,
      deps.responseBudget,
      service.multiSearch(
        req.auth!,
        readJson(req),
        {
          runs: req.get(FEDERATION_RUNS_HEADER) === 'true',
          derivations: req.get(DERIVATION_CANDIDATES_HEADER) === 'true',
        },
        arrivalOf(req),
        metadata(req),
      ),
    ),
  );

  return r;
}
