/** API key actions (Meilisearch's names) and what wildcards grant. */
export const ACTIONS = [
  // Meilisearch's order, which its error for an unknown action lists.
  '*',
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
  'tasks.*',
  'tasks.cancel',
  'tasks.delete',
  'tasks.get',
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
  '*.get',
  'webhooks.get',
  'webhooks.update',
  'webhooks.delete',
  'webhooks.create',
  'webhooks.*',
  'indexes.compact',
  'fields.post',
  'tasks.compact',
  'dynamicSearchRules.get',
  'dynamicSearchRules.create',
  'dynamicSearchRules.update',
  'dynamicSearchRules.delete',
  'dynamicSearchRules.*',
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

/** What each wildcard action stands for (`*` and `*.get` are handled apart). */
const FAMILIES: Record<string, readonly string[]> = {
  'documents.*': ['documents.add', 'documents.get', 'documents.delete'],
  'indexes.*': ['indexes.create', 'indexes.get', 'indexes.update', 'indexes.delete', 'indexes.swap', 'indexes.compact'],
  'tasks.*': ['tasks.get', 'tasks.cancel', 'tasks.delete', 'tasks.compact'],
  'settings.*': ['settings.get', 'settings.update'],
  'stats.*': ['stats.get'],
  'metrics.*': ['metrics.get'],
  'dumps.*': ['dumps.create'],
  'snapshots.*': ['snapshots.create'],
  'chats.*': ['chats.get', 'chats.delete'],
  'chatsSettings.*': ['chatsSettings.get', 'chatsSettings.update'],
  'webhooks.*': ['webhooks.get', 'webhooks.create', 'webhooks.update', 'webhooks.delete'],
  'dynamicSearchRules.*': [
    'dynamicSearchRules.get',
    'dynamicSearchRules.create',
    'dynamicSearchRules.update',
    'dynamicSearchRules.delete',
  ],
};

/**
 * Whether a key holding `keyActions` may perform `action`. Wildcards are expanded the way
 * Meilisearch expands them when it stores a key: `*` stands for every action but `*.get`
 * (the `keys.*` actions included, so the default admin key can manage keys), `*.get` for the
 * read actions, and `family.*` for its listed members only. A route guarded by a wildcard
 * itself (`documents.*` on `/documents/edit`) is therefore reached through `*` alone.
 */
export function grants(keyActions: readonly string[], action: string): boolean {
  for (const a of keyActions) {
    // A stored `family.*` is its members (Meilisearch expands it), never the wildcard itself.
    if (a === action && !FAMILIES[a]) return true;
    if (a === '*' && action !== '*.get') return true;
    if (a === '*.get' && GET_ACTIONS.has(action)) return true;
    if (FAMILIES[a]?.includes(action)) return true;
  }
  return false;
}

/**
 * Actions whose route takes no index in its path and filters or checks indexes itself
 * (lists, multi-search, index creation, swaps, task cancelation and deletion): an
 * index-restricted key may call them. Any other action on a route without an index needs a
 * key that reaches every index.
 */
const ROUTE_CHECKS_INDEX = new Set<string>([
  'search',
  'documents.get',
  'indexes.create',
  'indexes.get',
  'indexes.swap',
  'tasks.get',
  'tasks.cancel',
  'tasks.delete',
  'settings.get',
  'stats.*',
  'stats.get',
  'chatCompletions',
]);

export function routeChecksIndex(action: string): boolean {
  return ROUTE_CHECKS_INDEX.has(action);
}

/**
 * Index patterns, as Meilisearch 1.50 accepts them: `*` (every index), an exact uid, or a
 * uid prefix followed by one trailing `*` (`movies*`). A star anywhere else (`*_movies`,
 * `mo*ies`) is not a pattern and is rejected where patterns are read.
 */
export function isIndexPattern(p: string): boolean {
  if (p === '*') return true;
  const stem = p.endsWith('*') ? p.slice(0, -1) : p;
  return stem.length > 0 && stem.length <= 400 && /^[A-Za-z0-9_-]+$/.test(stem);
}

export function patternMatches(pattern: string, uid: string): boolean {
  return pattern.endsWith('*') ? uid.startsWith(pattern.slice(0, -1)) : pattern === uid;
}

export function indexAllowed(patterns: readonly string[], uid: string): boolean {
  return patterns.some((p) => patternMatches(p, uid));
}
