/**
 * Searches over the network: which instance answers a query naming a remote, and which
 * instances a search with `useNetwork` asks (by default, every search once the network has
 * shards). The merge is the engine's federated search (`engine::search::remote`).
 */
import { ApiError } from '../errors/api-error';
import type { Deps } from '../deps';
import { type RemoteConfig, searchTargets } from './state';

/** Where a query runs: here (labelled with this instance's name when it named it), or on a remote. */
export type Target = { local: true; name: string | null } | { local: false; name: string; remote: RemoteConfig };

/** The instance `federationOptions.remote` names, checked as Meilisearch checks it. */
export function remoteTarget(deps: Deps, name: string): Target {
  if (!deps.features.get().network) {
    throw new ApiError(
      'feature_not_enabled',
      'Performing a remote federated search requires enabling the `network` experimental feature. See https://github.com/orgs/meilisearch/discussions/805',
    );
  }
  const state = deps.network.get();
  const remote = state.remotes[name];
  if (remote === undefined)
    throw new ApiError(
      'invalid_multi_search_remote',
      `Invalid \`.federation_options.remote\`: remote \`${name}\` is not registered`,
    );
  return name === state.self ? { local: true, name } : { local: false, name, remote };
}

/**
 * A search's parameters refused as Meilisearch refuses them once the body is read (before its
 * index is looked up): `useNetwork` (even `false`) without the `network` feature. (A `vector`
 * or `media` without `hybrid` is refused by the engine once the index is found and the filter
 * read; `personalize` without a reranking API after the search, `search/personalize.ts`.)
 */
export function checkSearchFeatures(deps: Deps, query: { useNetwork?: unknown }): void {
  if (query.useNetwork != null && !deps.features.enabled('network')) {
    throw new ApiError(
      'feature_not_enabled',
      'passing `useNetwork` in a search query requires enabling the `network` experimental feature. See https://github.com/orgs/meilisearch/discussions/805',
    );
  }
}

/** Whether a search asks the whole network: `useNetwork`, by default on once there are shards. */
export function usesNetwork(deps: Deps, useNetwork: unknown): boolean {
  if (!deps.features.enabled('network')) return false;
  const state = deps.network.get();
  if (typeof useNetwork === 'boolean')
    return useNetwork && (state.self !== null || Object.keys(state.remotes).length > 0);
  return state.self !== null && Object.keys(state.shards).length > 0;
}

/** The instances a search over the network asks. */
export function networkTargets(deps: Deps): Target[] {
  return searchTargets(deps.network.get()).map((name) => remoteTarget(deps, name));
}
