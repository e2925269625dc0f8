/**
 * Webhooks: creation, update and deletion (`/webhooks`). The store (`webhooks/store.ts`) reads
 * the body with Meilisearch's validation and messages, and refuses changes to the webhook of
 * the command line.
 */
import type { Deps } from '../deps';
import type { Webhook } from '../webhooks/store';

/** Creates a webhook from a request's body (`{url, headers?}`). */
export function createWebhook(deps: Deps, body: unknown): Promise<Webhook> {
  return deps.webhooks.create(body);
}

/** Changes webhook `uuid` by a request's body (`null` removes a header). */
export function updateWebhook(deps: Deps, uuid: string, body: unknown): Promise<Webhook> {
  return deps.webhooks.update(uuid, body);
}

export function deleteWebhook(deps: Deps, uuid: string): Promise<void> {
  return deps.webhooks.delete(uuid);
}
