/**
 * `personalize` in search: the page's hits reranked by a reranking API (Cohere's rerank, as
 * Meilisearch 1.50 calls it) for the caller's `userContext`. Without
 * `--experimental-personalization-api-key` a search that asks for it is refused with
 * Meilisearch's `feature_not_enabled` error.
 *
 * As Meilisearch does it: the prompt is `User Context: <context>\nQuery: <q>` (without the
 * query line when there is no `q`), each hit's document (without the `_formatted`-like keys
 * the search adds) goes as one JSON string, the model is `rerank-english-v3.0`, and the hits
 * come back in the order the API gives (a hit it leaves out is left out). A network failure, a
 * time-out, a 5xx or an answer that does not read is tried again (10^attempt ms apart, plus
 * up to as much at random; a 429 100 ms more), at most 10 times; once the search's time
 * budget (the index's `searchCutoffMs`, else 1.5 s, from the request's arrival) is spent, the
 * hits are answered in the search's order. A 401, a 400 or another 4xx fails the search.
 * The request goes through the outbound client (allowed networks apply).
 */
import { ApiError } from '../errors/api-error';
import type { Logger } from '../logging';
import { outboundRequest } from '../native';
import { arrayItems, withItems } from '../util/json-array';

import type { Personalize } from '../schemas/search';

/** The search-added keys of a hit, which are not its document. */
const HIT_KEYS = new Set(['_formatted', '_matchesPosition', '_rankingScore', '_rankingScoreDetails', '_federation']);
const MODEL = 'rerank-english-v3.0';
const MAX_RETRIES = 10;
const REQUEST_TIMEOUT_MS = 30_000;
export const DEFAULT_BUDGET_MS = 1500;

const NOT_ENABLED =
  'reranking search results requires enabling the `personalization` experimental feature. See https://github.com/orgs/meilisearch/discussions/866';

type Failure = { error: ApiError; retry: 'no' | 'later' | 'rateLimited' };

export class Reranker {
  constructor(
    private readonly apiKey: string | null,
    private readonly url: string,
    private readonly logger: Logger,
  ) {}

  /** Refuses a personalized search when no reranking API is configured (checked after the search, as Meilisearch does). */
  requireEnabled(): void {
    if (this.apiKey === null) throw new ApiError('feature_not_enabled', NOT_ENABLED);
  }

  /**
   * The search answer `answer` with its hits reranked for `personalize`; `q` is the query
   * (null when none was given), `deadline` when the time budget ends (`Date.now()` terms).
   */
  async rerank(answer: Buffer, personalize: Personalize, q: string | null, deadline: number): Promise<Buffer> {
    this.requireEnabled();
    if (Date.now() > deadline) return answer;
    const hits = arrayItems(answer, 'hits');
    if (hits.items.length === 0) return answer;
    const documents = hits.items.map((h) => {
      const doc = JSON.parse(h.toString()) as Record<string, unknown>;
      for (const k of HIT_KEYS) delete doc[k];
      return JSON.stringify(doc);
    });
    const query =
      q === null ? `User Context: ${personalize.userContext}` : `User Context: ${personalize.userContext}\nQuery: ${q}`;
    const body = Buffer.from(JSON.stringify({ query, documents, model: MODEL }));
    for (let attempt = 0; ; attempt++) {
      const result = await this.call(body);
      if (Array.isArray(result)) {
        const order = result.filter((i) => i < hits.items.length).map((i) => hits.items[i]);
        return withItems(answer, hits, order);
      }
      this.logger.warn(`rerank attempt #${attempt} failed: ${result.error.message}`);
      if (result.retry === 'no' || attempt >= MAX_RETRIES) throw result.error;
      if (Date.now() > deadline) return answer;
      const base = 10 ** attempt + (result.retry === 'rateLimited' ? 100 : 0);
      const wait = base + Math.random() * base;
      if (Date.now() + wait > deadline) return answer;
      await new Promise((r) => setTimeout(r, wait));
    }
  }

  /** One request: the indexes of the hits in the API's order, or why not. */
  private async call(body: Buffer): Promise<number[] | Failure> {
    const a = await outboundRequest(
      'POST',
      this.url,
      { Authorization: `Bearer ${this.apiKey}`, 'Content-Type': 'application/json' },
      body,
      REQUEST_TIMEOUT_MS,
    );
    const fail = (code: string, message: string, retry: Failure['retry']): Failure => ({
      error: new ApiError(code, `Personalization service: ${message}`),
      retry,
    });
    if (a.failure === 'refused')
      return fail(
        'remote_could_not_send_request',
        `Network error: Network error: ${a.message ?? 'outside the allowed networks'}`,
        'no',
      );
    if (a.failure === 'timeout')
      return fail(
        'remote_could_not_send_request',
        `Network error: Request timeout: ${a.message ?? 'no answer in time'}`,
        'later',
      );
    if (a.failure !== null)
      return fail('remote_could_not_send_request', `Network error: Network error: ${a.message ?? a.failure}`, 'later');
    const text = a.body.toString();
    if (a.status >= 200 && a.status < 300) {
      try {
        const parsed = JSON.parse(text) as { results?: Array<{ index?: unknown }> };
        if (
          !Array.isArray(parsed.results) ||
          parsed.results.some((r) => typeof r?.index !== 'number' || !Number.isInteger(r.index) || r.index < 0)
        )
          throw new Error('missing field `results` of indexes');
        return parsed.results.map((r) => r.index as number);
      } catch (err) {
        return fail(
          'remote_bad_response',
          `Failed to parse response: Failed to parse response: ${(err as Error).message}`,
          'later',
        );
      }
    }
    if (a.status === 401) return fail('remote_invalid_api_key', 'Unauthorized: invalid API key', 'no');
    if (a.status === 429) return fail('too_many_search_requests', 'Rate limited: too many requests', 'rateLimited');
    if (a.status === 400) return fail('remote_bad_request', `Bad request: ${text}`, 'no');
    if (a.status >= 500)
      return fail('remote_remote_error', `Internal server error: Status ${a.status}: ${text}`, 'later');
    if (a.status >= 402 && a.status < 500)
      return fail('remote_bad_response', `Cohere API error: Status ${a.status}: ${text}`, 'no');
    return fail('remote_bad_response', `Cohere API error: Unexpected status ${a.status}: ${text}`, 'later');
  }
}
