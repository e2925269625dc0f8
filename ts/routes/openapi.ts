/** `GET /openapi.json`: the OpenAPI 3.1 description of every route this instance serves (public, like `/health`). */
import { Router } from 'express';
import type { Deps } from '../deps';
import { openApiDocument } from '../openapi/document';

export function openapiRoutes(deps: Deps): Router {
  const r = Router();
  r.get('/openapi.json', (_req, res) => {
    res.json(openApiDocument(deps.config));
  });
  return r;
}
