/**
 * What chat completions count (`/chats`), in Meilisearch 1.50's families: the searches the
 * model asked for, and the tokens providers reported per workspace and model (from the usage
 * a provider streams). Like Meilisearch's labelled counters, a family shows once it has a sample.
 */
import type { Exposition } from './exposition';

type TokenKind = 'prompt' | 'completion' | 'total';

const TOKEN_FAMILIES: Record<TokenKind, [string, string]> = {
  completion: ['meilisearch_chat_completion_tokens_total', 'Total number of completion tokens consumed'],
  prompt: ['meilisearch_chat_prompt_tokens_total', 'Total number of prompt tokens consumed'],
  total: ['meilisearch_chat_tokens_total', 'Total number of tokens consumed (prompt + completion)'],
};

export class ChatMetrics {
  #searches = 0;
  readonly #tokens = new Map<
    string,
    { workspace: string; model: string; prompt: number; completion: number; total: number }
  >();

  /** One search the model asked for ran. */
  searched(): void {
    this.#searches++;
  }

  /** A provider's `usage` for a round of `workspace` with `model`. */
  used(workspace: string, model: string, usage: unknown): void {
    if (usage === null || typeof usage !== 'object') return;
    const u = usage as Record<string, unknown>;
    const key = JSON.stringify([workspace, model]);
    const t = this.#tokens.get(key) ?? { workspace, model, prompt: 0, completion: 0, total: 0 };
    for (const kind of ['prompt', 'completion', 'total'] as const) {
      const n = u[`${kind}_tokens`];
      if (typeof n === 'number' && Number.isFinite(n) && n >= 0) t[kind] += n;
    }
    this.#tokens.set(key, t);
  }

  render(out: Exposition): void {
    if (this.#searches > 0) {
      out
        .family('meilisearch_chat_searches_total', 'counter', 'Total number of searches performed by the chat route')
        .sample('meilisearch_chat_searches_total', [['type', 'internal']], this.#searches);
    }
    if (this.#tokens.size === 0) return;
    const rows = [...this.#tokens.values()].sort((a, b) => (a.model + a.workspace < b.model + b.workspace ? -1 : 1));
    for (const kind of ['completion', 'prompt', 'total'] as const) {
      const [name, help] = TOKEN_FAMILIES[kind];
      out.family(name, 'counter', help);
      for (const r of rows)
        out.sample(
          name,
          [
            ['model', r.model],
            ['workspace', r.workspace],
          ],
          r[kind],
        );
    }
  }
}
