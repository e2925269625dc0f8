/** API keys: creation, update and deletion (`/keys`); the store is `auth/keys.ts`. */
import { randomUUID } from 'node:crypto';
import { GLOBAL_ACTIONS } from '../auth/actions';
import type { KeyRecord } from '../auth/keys';
import type { Deps } from '../deps';
import { ApiError } from '../errors/api-error';
import { nowIso } from '../util/time';

/** A key to create, its fields checked; `expiresAt` normalized (and in the future) or null. */
export interface NewKey {
  uid?: string;
  name?: string | null;
  description?: string | null;
  actions: string[];
  indexes: string[];
  expiresAt: string | null;
}

/** The fields of a key that can change. */
export interface KeyChange {
  name?: string | null;
  description?: string | null;
}

/** The key of that uid or value, else `api_key_not_found`. */
export function findKey(deps: Deps, uidOrKey: string): KeyRecord {
  const k = deps.keys.find(uidOrKey);
  if (!k) throw new ApiError('api_key_not_found', `API key \`${uidOrKey}\` not found.`);
  return k;
}

/**
 * Creates a key. An index-restricted key with a global action is refused, as is a uid already
 * taken; without a uid, one is drawn.
 */
export async function createKey(deps: Deps, key: NewKey): Promise<KeyRecord> {
  // An empty `indexes` list counts as unrestricted here, as in Meilisearch (it then grants nothing).
  const restricted = key.indexes.length > 0 && !key.indexes.includes('*');
  const global = restricted ? key.actions.find((a) => GLOBAL_ACTIONS.has(a)) : undefined;
  if (global !== undefined) {
    throw new ApiError(
      'index_scoped_api_key_with_global_action',
      `cannot create index-scoped API key with global action \`"${global}"\`\n  - Hint: remove action \`"${global}"\` from the action list, or remove \`indexes\` to make the key global`,
    );
  }
  const uid = (key.uid ?? randomUUID()).toLowerCase();
  if (deps.keys.get(uid))
    throw new ApiError('api_key_already_exists', `\`uid\` field value \`${uid}\` is already an existing API key.`);
  const now = nowIso();
  const record = {
    uid,
    name: key.name ?? null,
    description: key.description ?? null,
    actions: key.actions,
    indexes: key.indexes,
    expiresAt: key.expiresAt,
    createdAt: now,
    updatedAt: now,
  };
  await deps.keys.put([record]);
  return record;
}

/** Changes the name and/or the description of the key of that uid or value. */
export async function updateKey(deps: Deps, uidOrKey: string, change: KeyChange): Promise<KeyRecord> {
  const updated = { ...findKey(deps, uidOrKey), updatedAt: nowIso() };
  if (change.name !== undefined) updated.name = change.name;
  if (change.description !== undefined) updated.description = change.description;
  await deps.keys.put([updated]);
  return updated;
}

export async function deleteKey(deps: Deps, uidOrKey: string): Promise<void> {
  await deps.keys.delete(findKey(deps, uidOrKey).uid);
}
