/**
 * `buildApp(deps)` returns the Express app without listening. Middleware order lives
 * here: request observers (log, metrics, telemetry) → CORS → raw body (payload limit) →
 * routes → 405 (a known path, another method) or 404 → error handler.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Deps } from './deps';
import { errorMiddleware } from './errors/middleware';
import { allowAnyOrigin } from './http/cors';
import { allowedMethods } from './http/methods';
import { observeRequests, type RequestObserver } from './http/observe';
import { repairPath } from './http/path';
import { infoLine, loggablePath } from './logging';
import { archiveRoutes } from './routes/archives';
import { exportRoutes } from './routes/export';
import { documentRoutes } from './routes/documents';
import { indexRoutes } from './routes/indexes';
import { networkContext } from './http/network-context';
import { openapiRoutes } from './routes/openapi';
import { previewRoutes } from './routes/preview';
import { keyRoutes } from './routes/keys';
import { mcpRoutes } from './routes/mcp';
import { networkRoutes } from './routes/network';
import { observabilityRoutes } from './routes/observability';
import { renderRoutes } from './routes/render';
import { searchRoutes } from './routes/search';
import { SearchService } from './search/service';
import { searchRuleRoutes } from './routes/search-rules';
import { settingsRoutes } from './routes/settings';
import { systemRoutes } from './routes/system';
import { taskRoutes } from './routes/tasks';
import { webhookRoutes } from './routes/webhooks';
import { chatRoutes } from './routes/chats';
import { analyticsObserver } from './telemetry/middleware';
import { taskCompactionRoutes } from './routes/tasks-compact';

/** Who watches requests: the request log, `/metrics` and telemetry (one clock and one listener for all). */
export function requestObservers(deps: Deps): RequestObserver[] {
  const requestLog: RequestObserver = {
    // The hot path pays nothing for a request line nobody will read.
    wants: () => deps.logger.isInfoEnabled(),
    done: (req, res, ms, finished) => {
      if (!finished) return;
      infoLine(deps.logger, 'request', {
        target: 'quarry::http',
        method: req.method,
        path: loggablePath(req.path),
        status: res.statusCode,
        ms: Math.round(ms * 1000) / 1000,
      });
    },
  };
  const observers = [requestLog, deps.metrics.http.observer(() => deps.features.enabled('metrics'))];
  if (deps.analytics) observers.push(analyticsObserver(deps.analytics));
  return observers;
}

export function buildApp(
  deps: Deps,
  observers = requestObservers(deps),
  search = new SearchService(deps),
): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');

  app.use(observeRequests(observers));

  app.use((req: Request, res: Response, next: NextFunction) => {
    allowAnyOrigin(res);
    if (req.method === 'OPTIONS') {
      res.setHeader('Access-Control-Allow-Methods', '*');
      res.setHeader('Access-Control-Allow-Headers', req.headers['access-control-request-headers'] ?? '*');
      res.setHeader('Access-Control-Max-Age', '86400');
      res.status(204).end();
      return;
    }
    next();
  });

  app.use(repairPath);
  app.use(express.raw({ type: () => true, limit: deps.config.payloadSizeLimit }));
  app.use(networkContext);

  // Search first: it is the hot path, and its paths overlap no other router's.
  app.use(searchRoutes(deps, search));
  app.use(systemRoutes(deps));
  app.use(indexRoutes(deps));
  app.use(documentRoutes(deps));
  app.use(settingsRoutes(deps));
  app.use(taskCompactionRoutes(deps));
  app.use(taskRoutes(deps));
  app.use(keyRoutes(deps));
  app.use(renderRoutes(deps));
  app.use(networkRoutes(deps));
  app.use(archiveRoutes(deps));
  app.use(exportRoutes(deps));
  app.use(searchRuleRoutes(deps));
  app.use(webhookRoutes(deps));
  app.use(chatRoutes(deps, search));
  app.use(observabilityRoutes(deps));
  app.use(previewRoutes(deps));
  app.use(openapiRoutes(deps));
  // Quarry's own, behind a start-up option: without it `/mcp` is no route, as in Meilisearch.
  if (deps.config.experimentalMcp) app.use(mcpRoutes(deps, search));

  app.use((req: Request, res: Response) => {
    const allowed = allowedMethods(req.path, deps.config);
    if (allowed.length > 0) {
      res.setHeader('Allow', allowed.join(', '));
      res.status(405).end();
      return;
    }
    res.status(404).end();
  });
  app.use(errorMiddleware(deps.logger, deps.config.payloadSizeLimit));
  return app;
}
