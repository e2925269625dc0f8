/**
 * Facet search over the network: the same request on one instance per shard (`local`
 * answers for this one), the counts added per value by the engine (`mergeFacetHits`). An
 * instance that fails lands in `remoteErrors`.
 */
import type { Deps } from '../deps';
import { errorBody } from '../errors/catalog';
import { askInstance } from './ask';
import { networkTargets } from './search';

export async function facetSearchOverNetwork(
  deps: Deps,
  uid: string,
  body: Record<string, unknown>,
  local: () => Promise<Buffer>,
): Promise<Buffer> {
  const remoteErrors: Record<string, unknown> = {};
  const pages = await Promise.all(
    networkTargets(deps).map(async (target) => {
      if (target.local) return (JSON.parse((await local()).toString()) as { facetHits: unknown[] }).facetHits;
      const r = await askInstance(
        deps,
        target,
        `/indexes/${encodeURIComponent(uid)}/facet-search`,
        { ...body, useNetwork: false },
        'search',
      );
      if (r.ok && Array.isArray(r.body.facetHits)) return r.body.facetHits as unknown[];
      remoteErrors[target.name] = r.ok
        ? errorBody('remote_remote_error', `Remote \`${target.name}\` encountered an error: ${String(r.body.message)}`)
        : r.error;
      return [];
    }),
  );
  return deps.registry
    .handle(uid)
    .mergeFacetHits({ facetName: body.facetName, facetQuery: body.facetQuery ?? null, pages, remoteErrors });
}
