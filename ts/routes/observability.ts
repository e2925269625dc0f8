/**
 * `GET /metrics` (experimental `metrics`) and `/logs/*` (experimental `logsRoute`), both
 * guarded by `metrics.get`. Bodies are checked before the feature, as Meilisearch does.
 *
 * `POST /logs/stream` holds the response open and writes each log line to it as it happens
 * (`ts/logs/hub.ts`) until `DELETE /logs/stream` or the client goes away; one reader at a
 * time. Mode `profile` (Meilisearch's trace profile) has no Quarry counterpart and streams
 * JSON lines; `profileMemory` is accepted and has no effect.
 */
import { Router } from 'express';
import type { Deps } from '../deps';
import { ApiError } from '../errors/api-error';
import { readJson } from '../http/body';
import { logHub } from '../logging';
import type { StreamSink } from '../logs/hub';
import { TargetError, TargetFilter } from '../logs/target';
import { CONTENT_TYPE } from '../metrics/metrics';
import { boolean, DeserrError, oneOf, type Parser, refine, string, struct } from '../settings/deserr';

const targetField: Parser<TargetFilter> = (value, loc) => {
  let filter: TargetFilter | null = null;
  refine(string, (text) => {
    try {
      filter = TargetFilter.parse(text);
      return null;
    } catch (err) {
      if (err instanceof TargetError) return err.message;
      throw err;
    }
  })(value, loc);
  return filter!;
};

const StreamBody = struct<{ target: TargetFilter; mode: 'human' | 'json' | 'profile'; profileMemory: boolean }>(
  { target: targetField, mode: oneOf(['human', 'json', 'profile'] as const), profileMemory: boolean },
  { defaults: { target: () => TargetFilter.parse('info'), mode: () => 'human', profileMemory: () => false } },
);

const StderrBody = struct<{ target: TargetFilter }>(
  { target: targetField },
  { defaults: { target: () => TargetFilter.parse('info') } },
);

function parseBody<T>(parser: Parser<T>, body: unknown): T {
  try {
    return parser(body, []);
  } catch (err) {
    if (err instanceof DeserrError) throw new ApiError('bad_request', err.message);
    throw err;
  }
}

export function observabilityRoutes(deps: Deps): Router {
  const r = Router();
  const { guard, features } = deps;
  const hub = logHub(deps.logger);

  const requireLogsRoute = () => {
    if (!features.enabled('logsRoute')) {
      throw new ApiError(
        'feature_not_enabled',
        'Modifying logs through the `/logs/*` routes requires enabling the `logs route` experimental feature. See https://github.com/orgs/meilisearch/discussions/721',
      );
    }
  };

  r.get('/metrics', guard('metrics.get'), async (_req, res) => {
    if (!features.enabled('metrics')) {
      throw new ApiError(
        'feature_not_enabled',
        'Getting metrics requires enabling the `metrics` experimental feature. See https://github.com/meilisearch/product/discussions/625',
      );
    }
    const text = await deps.metrics.render();
    res.status(200).setHeader('Content-Type', CONTENT_TYPE);
    res.end(text);
  });

  r.post('/logs/stream', guard('metrics.get'), (req, res) => {
    const body = parseBody(StreamBody, readJson(req));
    requireLogsRoute();
    const sink: StreamSink = {
      write: (line) => void res.write(line),
      backlog: () => res.writableLength,
      end: () => void res.end(),
    };
    if (!hub.openStream(body.target, body.mode === 'human' ? 'human' : 'json', sink)) {
      throw new ApiError('bad_request', 'The `/logs/stream` route is currently in use by someone else.');
    }
    res.once('close', () => hub.closeStream(sink));
    // A quiet log stream is not an idle client.
    req.socket.setTimeout(0);
    res.status(200);
    res.setHeader('Content-Type', 'application/octet-stream');
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
  });

  r.delete('/logs/stream', guard('metrics.get'), (_req, res) => {
    requireLogsRoute();
    hub.closeStream();
    res.status(204).end();
  });

  r.post('/logs/stderr', guard('metrics.get'), (req, res) => {
    const body = parseBody(StderrBody, readJson(req));
    requireLogsRoute();
    hub.setStderr(body.target);
    res.status(204).end();
  });

  return r;
}
