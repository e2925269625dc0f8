/** One read sent to another instance of the network (documents, facet search). */
import type { Deps } from '../deps';
import { errorBody } from '../errors/catalog';
import { outboundRequest } from '../native/outbound';
import { remoteFailure } from './forward';
import type { Target } from './search';

/**
 * What another instance answers to `POST path` with `body` (with its write key, for reading
 * documents, or its search key): the parsed body, or its error as `remoteErrors` shows it.
 */
export async function askInstance(deps: Deps, target: Extract<Target, { local: false }>, path: string, body: unknown, key: 'search' | 'write' = 'write'): Promise<{ ok: true; body: any; status: number } | { ok: false; error: ReturnType<typeof errorBody> }> {
  const { remote, name } = target;
  const secret = key === 'write' ? (remote.writeApiKey ?? remote.searchApiKey) : remote.searchApiKey;
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (secret !== null) headers.Authorization = `Bearer ${secret}`;
  const answer = await outboundRequest('POST', `${remote.url.replace(/\/+$/, '')}${path}`, headers, Buffer.from(JSON.stringify(body)), deps.config.remoteTimeoutMs);
  const failure = remoteFailure(name, answer, 'proxy_could_not_send_request');
  if (failure) return { ok: false, error: errorBody(failure.code, failure.message) };
  try {
    return { ok: true, body: JSON.parse(answer.body.toString()), status: answer.status };
  } catch {
    return { ok: false, error: errorBody('remote_bad_response', `could not parse the response of remote \`${name}\``) };
  }
}

