/** Requests to another instance of the network: the one way they are addressed and signed. */
import type { Deps } from '../deps';
import { errorBody } from '../errors/catalog';
import { type OutboundAnswer, outboundRequest } from '../native/outbound';
import { remoteFailure } from './forward';
import type { Target } from './search';
import type { RemoteConfig } from './state';

/**
 * Sends `method path` to `remote` with `key` (none: unsigned) and `headers`, `body` as JSON
 * (a Buffer as it is), within `timeoutMs`.
 */
export function sendTo(
  remote: RemoteConfig,
  method: string,
  path: string,
  body: unknown,
  key: string | null,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<OutboundAnswer> {
  const all: Record<string, string> = { 'Content-Type': 'application/json', ...headers };
  if (key !== null) all.Authorization = `Bearer ${key}`;
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
  return outboundRequest(method, `${remote.url.replace(/\/+$/, '')}${path}`, all, bytes, timeoutMs);
}

/**
 * What another instance answers to `POST path` with `body` (with its write key, for reading
 * documents, or its search key): the parsed body, or its error as `remoteErrors` shows it.
 */
export async function askInstance(
  deps: Deps,
  target: Extract<Target, { local: false }>,
  path: string,
  body: unknown,
  key: 'search' | 'write' = 'write',
  // biome-ignore lint/suspicious/noExplicitAny: another instance's JSON, read by each caller as its route's shape
): Promise<{ ok: true; body: any } | { ok: false; error: ReturnType<typeof errorBody> }> {
  const { remote, name } = target;
  const secret = key === 'write' ? (remote.writeApiKey ?? remote.searchApiKey) : remote.searchApiKey;
  const answer = await sendTo(remote, 'POST', path, body, secret, {}, deps.config.remoteTimeoutMs);
  const failure = remoteFailure(name, answer, 'proxy_could_not_send_request');
  if (failure) return { ok: false, error: errorBody(failure.code, failure.message) };
  try {
    return { ok: true, body: JSON.parse(answer.body.toString()) };
  } catch {
    return { ok: false, error: errorBody('remote_bad_response', `could not parse the response of remote \`${name}\``) };
  }
}
