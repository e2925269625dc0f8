/** API key actions (Meilisearch's names) and what wildcards grant. */
export const ACTIONS = [
  '*',
  '*.get',
  'search',
  'documents.*',
  'documents.add',
  'documents.get',
  'documents.delete',
  'indexes.*',
  'indexes.create',
  'indexes.get',
  'indexes.update',
  'indexes.delete',
  'indexes.swap',
  'indexes.compact',
  'tasks.*',
  'tasks.get',
  'tasks.cancel',
  'tasks.delete',
  'tasks.compact',
  'settings.*',
  'settings.get',
  'settings.update',
  'stats.*',
  'stats.get',
  'metrics.*',
  'metrics.get',
  'dumps.*',
  'dumps.create',
  'snapshots.*',
  'snapshots.create',
  'version',
  'keys.create',
  'keys.get',
  'keys.update',
  'keys.delete',
  'experimental.get',
  'experimental.update',
  'export',
  'network.get',
  'network.update',
  'chatCompletions',
  'chats.*',
  'chats.get',
  'chats.delete',
  'chatsSettings.*',
  'chatsSettings.get',
  'chatsSettings.update',
  'webhooks.*',
  'webhooks.get',
  'webhooks.create',
  'webhooks.update',
  'webhooks.delete',
  'fields.post',
  'dynamicSearchRules.*',
  'dynamicSearchRules.get',
  'dynamicSearchRules.create',
  'dynamicSearchRules.update',
  'dynamicSearchRules.delete',
] as const;

export type Action = (typeof ACTIONS)[number];

/** Read actions granted by `*.get` (`keys.get` deliberately excluded). */
const GET_ACTIONS = new Set<string>([
  'search',
  'documents.get',
  'indexes.get',
  'tasks.get',
  'settings.get',
  'stats.get',
  'metrics.get',
  'version',
  'experimental.get',
  'export',
  'network.get',
  'chats.get',
  'chatsSettings.get',
  'webhooks.get',
  'fields.post',
  'dynamicSearchRules.get',
]);

/** Actions that make no sense on an index-restricted key. */
export const GLOBAL_ACTIONS = new Set<string>([
  'tasks.compact',
  'metrics.*',
  'metrics.get',
  'dumps.*',
  'dumps.create',
  'snapshots.*',
  'snapshots.create',
  'version',
  'keys.create',
  'keys.get',
  'keys.update',
  'keys.delete',
  'experimental.get',
  'experimental.update',
  'export',
  'network.get',
  'network.update',
  'chats.*',
  'chats.get',
  'chats.delete',
  'chatsSettings.*',
  'chatsSettings.get',
  'chatsSettings.update',
  'webhooks.*',
  'webhooks.get',
  'webhooks.create',
  'webhooks.update',
  'webhooks.delete',
  'dynamicSearchRules.*',
  'dynamicSearchRules.get',
  'dynamicSearchRules.create',
  'dynamicSearchRules.update',
  'dynamicSearchRules.delete',
]);

export function grants(keyActions: readonly string[], action: string): boolean {
  for (const a of keyActions) {
    if (a === action) return true;
    if (a === '*' && !action.startsWith('keys.')) return true;
    if (a === '*.get' && GET_ACTIONS.has(action)) return true;
    if (a.endsWith('.*') && action.startsWith(a.slice(0, -1))) return true;
  }
  return false;
}

/** Index patterns: `*`, exact uids, and `prefix*`. */
export function indexAllowed(patterns: readonly string[], uid: string): boolean {
  return patterns.some((p) => p === '*' || p === uid || (p.endsWith('*') && uid.startsWith(p.slice(0, -1))));
}
