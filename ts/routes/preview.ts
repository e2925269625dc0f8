/**
 * `GET /`: the search preview page, or Meilisearch's `{"status":"Meilisearch is running"}`
 * when the page is off (`--no-dashboard`, `--env production`) or the client asks for JSON.
 * Public, like `/health`: the page itself asks for a key when the API needs one.
 */
import { type Request, type Response, Router } from 'express';
import type { Deps } from '../deps';
import { loadPreviewPage, type PreviewPage } from '../preview/page';

export function previewRoutes(deps: Deps): Router {
  const r = Router();
  let page: PreviewPage | null = null;
  if (deps.config.dashboard) {
    try {
      page = loadPreviewPage();
    } catch (err) {
      deps.logger.error('search preview page not served: its files could not be read', { error: String(err) });
    }
  }

  r.get('/', (req: Request, res: Response) => {
    if (page === null || req.accepts(['html', 'json']) === 'json') {
      res.json({ status: 'Meilisearch is running' });
      return;
    }
    res.set(page.headers).send(page.html);
  });

  return r;
}
