/** CORS: every origin may call the API (as Meilisearch allows); keys, not origins, guard it. */
import type { ServerResponse } from 'node:http';

export function allowAnyOrigin(res: ServerResponse): ServerResponse {
  res.setHeader('Access-Control-Allow-Origin', '*');
  return res;
}
