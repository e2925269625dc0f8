/**
 * One call to a workspace's LLM provider, through the one outbound client.
 *
 * The outbound client answers with the whole body, not a stream: the provider's server-sent
 * events are read once its answer is complete, then parsed here into chunks that the
 * conversation (`completions.ts`) forwards one by one. The client still receives server-sent
 * events, but each provider round arrives at once rather than token by token.
 *
 * Sources as Meilisearch 1.50 calls them: `openAi`, `mistral` and `vLlm` speak the OpenAI API
 * at `{baseUrl}/chat/completions` (`openAi` and `mistral` have a default base URL, `vLlm` needs
 * one) with `Authorization: Bearer`, `OpenAI-Organization` and `OpenAI-Project`; `azureOpenAi`
 * at `{baseUrl}/openai/deployments/{deploymentId}/chat/completions?api-version={apiVersion}`
 * with an `api-key` header. A provider's refusal becomes Meilisearch's error event (`StreamError`).
 */
import { randomUUID } from 'node:crypto';
import { outboundRequest } from '../native';
import type { ChatWorkspaceSettings } from './settings';

/** How long one provider round may take (its whole answer is awaited). */
export const PROVIDER_TIMEOUT_MS = 300_000;

const DEFAULT_BASE_URLS: Partial<Record<ChatWorkspaceSettings['source'], string>> = {
  openAi: 'https://api.openai.com/v1/',
  mistral: 'https://api.mistral.ai/v1/',
};

/** The error event Meilisearch streams when a provider round fails. */
export interface StreamErrorEvent {
  event_id: string;
  type: 'error';
  error: { type: string; code: string | null; message: string; param: string | null; event_id: null };
}

export function errorEvent(
  type: string,
  code: string | null,
  message: string,
  param: string | null = null,
): StreamErrorEvent {
  return { event_id: randomUUID(), type: 'error', error: { type, code, message, param, event_id: null } };
}

/** What one provider round gave: its chunks (JSON objects, in order), then maybe an error that ended it. */
export interface ProviderRound {
  chunks: unknown[];
  error: StreamErrorEvent | null;
}

/** The URL and headers of a workspace's provider. */
export function providerRequest(s: ChatWorkspaceSettings): { url: string; headers: Record<string, string> } {
  const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'text/event-stream' };
  if (s.source === 'azureOpenAi') {
    if (s.apiKey !== null) headers['api-key'] = s.apiKey;
    const base = (s.baseUrl ?? '').replace(/\/+$/, '');
    const url = `${base}/openai/deployments/${encodeURIComponent(s.deploymentId ?? '')}/chat/completions?api-version=${encodeURIComponent(s.apiVersion ?? '')}`;
    return { url, headers };
  }
  if (s.apiKey !== null) headers.Authorization = `Bearer ${s.apiKey}`;
  if (s.orgId !== null) headers['OpenAI-Organization'] = s.orgId;
  if (s.projectId !== null) headers['OpenAI-Project'] = s.projectId;
  headers['OpenAI-Beta'] = 'assistants=v2';
  const base = (s.baseUrl ?? DEFAULT_BASE_URLS[s.source] ?? '').replace(/\/+$/, '');
  return { url: `${base}/chat/completions`, headers };
}

/** Sends one round of the conversation and reads the provider's whole answer. */
export async function callProvider(s: ChatWorkspaceSettings, body: Record<string, unknown>): Promise<ProviderRound> {
  const { url, headers } = providerRequest(s);
  const a = await outboundRequest('POST', url, headers, Buffer.from(JSON.stringify(body)), PROVIDER_TIMEOUT_MS);
  if (a.failure !== null) return { chunks: [], error: errorEvent('transport_error', null, a.message ?? a.failure) };
  const text = a.body.toString('utf8');
  if (a.status < 200 || a.status >= 300) return { chunks: [], error: refusal(s, text) };
  return parseEvents(s, text);
}

/** A provider's error body, read as Meilisearch reads it (Mistral's at the top level, OpenAI's under `error`). */
function refusal(s: ChatWorkspaceSettings, text: string): StreamErrorEvent {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return errorEvent('reqwest_error', null, 'error decoding response body');
  }
  const e = s.source === 'mistral' ? body : (body as { error?: unknown } | null)?.error;
  if (e === null || typeof e !== 'object') return errorEvent('reqwest_error', null, 'error decoding response body');
  const { message, type, code, param } = e as Record<string, unknown>;
  if (typeof message !== 'string' || typeof type !== 'string')
    return errorEvent('reqwest_error', null, 'error decoding response body');
  return errorEvent(type, optionalText(code), message, optionalText(param));
}

function optionalText(v: unknown): string | null {
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null;
}

/** The fields a stream chunk must have, in the order a missing one is reported. */
const CHUNK_FIELDS: ReadonlyArray<[string, (v: unknown) => boolean]> = [
  ['id', (v) => typeof v === 'string'],
  ['choices', (v) => Array.isArray(v)],
  ['created', (v) => typeof v === 'number'],
  ['model', (v) => typeof v === 'string'],
  ['object', (v) => typeof v === 'string'],
];

/**
 * The `data:` payloads of a server-sent events body, up to `[DONE]`. A body that is no event
 * stream but an error (a provider may answer 200 with one) is read as an error.
 */
function parseEvents(s: ChatWorkspaceSettings, text: string): ProviderRound {
  const chunks: unknown[] = [];
  const datas: string[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    const lines = block.split(/\r?\n/).filter((l) => l.startsWith('data:'));
    if (lines.length) datas.push(lines.map((l) => l.slice(5).replace(/^ /, '')).join('\n'));
  }
  if (datas.length === 0) {
    if (text.trim().startsWith('{')) return { chunks, error: refusal(s, text) };
    return { chunks, error: errorEvent('stream_ended', null, 'Stream ended') };
  }
  for (const data of datas) {
    if (data === '[DONE]') return { chunks, error: null };
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch (err) {
      return { chunks, error: errorEvent('json_deserialize_error', 'internal', (err as Error).message) };
    }
    if (chunk === null || typeof chunk !== 'object' || Array.isArray(chunk)) {
      return {
        chunks,
        error: errorEvent(
          'json_deserialize_error',
          'internal',
          `invalid type: expected struct CreateChatCompletionStreamResponse at line 1 column ${data.length}`,
        ),
      };
    }
    const missing = CHUNK_FIELDS.find(([name, ok]) => !ok((chunk as Record<string, unknown>)[name]));
    if (missing)
      return {
        chunks,
        error: errorEvent(
          'json_deserialize_error',
          'internal',
          `missing field \`${missing[0]}\` at line 1 column ${data.length}`,
        ),
      };
    chunks.push(chunk);
  }
  // A stream that stops without `[DONE]` ends as Meilisearch's client reports it.
  return { chunks, error: errorEvent('stream_ended', null, 'Stream ended') };
}
