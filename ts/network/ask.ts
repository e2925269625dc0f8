/** Requests to another instance of the network: the one way they are addressed and signed. */
import type { Deps } from '../deps';
import { ApiError } from '../errors/api-error';
import { errorBody } from '../errors/catalog';
import { catalogByCode } from '../native';
import { type OutboundAnswer, outboundRequest } from '../native/outbound';
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

/**
 * Why an instance's answer is not a success, with Meilisearch's codes; null when it is. An
 * instance that cannot be reached is `unreachable` (a write: `remote_could_not_send_request`;
 * a read, reported in `remoteErrors`: `proxy_could_not_send_request`, as the search's).
 */
export function remoteFailure(
  name: string,
  a: OutboundAnswer,
  unreachable = 'remote_could_not_send_request',
): ApiError | null {
  if (a.failure === 'timeout')
    return new ApiError(
      'remote_timeout',
      `Remote \`${name}\` did not answer within the time allowed: ${a.message ?? ''}`,
    );
  if (a.failure !== null)
    return new ApiError(unreachable, `Could not send the request to remote \`${name}\`: ${a.message ?? ''}`);
  if (a.status >= 200 && a.status < 300) return null;
  if (a.status === 401 || a.status === 403) {
    return new ApiError(
      'remote_invalid_api_key',
      `could not authenticate against the remote \`${name}\`\n  - hint: check that the remote was registered with a valid \`writeApiKey\``,
    );
  }
  try {
    const e = JSON.parse(a.body.toString()) as { code?: unknown; message?: unknown };
    if (typeof e.code === 'string' && typeof e.message === 'string') {
      const code = catalogByCode().has(e.code) ? e.code : 'remote_remote_error';
      return new ApiError(code, `Remote \`${name}\` encountered an error: ${e.message}`);
    }
  } catch {
    // fall through
  }
  return badResponse(name, a.body);
}

export function badResponse(name: string, body: Buffer): ApiError {
  return new ApiError(
    'remote_bad_response',
    `could not parse the response of remote \`${name}\`:\n  - response from remote: ${body.toString().slice(0, 200)}`,
  );
}
