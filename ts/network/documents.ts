/**
 * Documents over the network: once it has shards, `GET /documents`, `POST /documents/fetch`
 * and `GET /documents/{id}` read every shard (one instance each, as searches do) unless
 * `useNetwork: false`. Each instance gives its first `offset + limit` documents; the engine
 * puts them one after the other (or merges them by `sort`) and cuts the page. An instance
 * that fails lands in `remoteErrors`.
 */
import type { Deps } from '../deps';
import { type FetchQuery, NativeIndex } from '../native';
import { askInstance } from './ask';
import { networkTargets } from './search';

/** A `/documents` query, as the routes read it: the engine's, with its page and projection given. */
export type DocumentsQuery = Omit<FetchQuery, 'containsFilter'> &
  Required<Pick<FetchQuery, 'offset' | 'limit' | 'fields' | 'ids' | 'retrieveVectors'>>;

/** The attribute a sort expression reads (`_geo` for `_geoPoint(…)`). */
function sortField(spec: string): string {
  const target = spec.slice(0, spec.lastIndexOf(':')).trim();
  return target.startsWith('_geoPoint(') ? '_geo' : target;
}

/** A page of the network's documents. */
export async function fetchOverNetwork(deps: Deps, uid: string, q: DocumentsQuery): Promise<Buffer> {
  const fields = q.fields !== null && q.sort ? [...q.fields, ...q.sort.map(sortField)] : q.fields;
  const query = {
    offset: 0,
    limit: q.offset + q.limit,
    fields,
    ids: q.ids,
    retrieveVectors: q.retrieveVectors,
    sort: q.sort,
    filter: q.filter,
  };
  const remoteErrors: Record<string, unknown> = {};
  const pages = await Promise.all(
    networkTargets(deps).map(async (target) => {
      if (target.local) {
        const bytes = await deps.registry
          .handle(uid)
          .fetchDocuments({ ...query, containsFilter: deps.features.get().containsFilter });
        return JSON.parse(bytes.toString()) as { results: unknown[]; total: number };
      }
      const r = await askInstance(deps, target, `/indexes/${encodeURIComponent(uid)}/documents/fetch`, {
        ...query,
        useNetwork: false,
      });
      if (r.ok) return r.body as { results: unknown[]; total: number };
      remoteErrors[target.name] = r.error;
      return null;
    }),
  );
  return NativeIndex.mergeDocumentPages({
    pages: pages.filter((p) => p !== null),
    sort: q.sort ?? [],
    fields: q.fields,
    offset: q.offset,
    limit: q.limit,
    remoteErrors,
  });
}

/** One document from whichever instance holds it (null: none does). */
export async function documentOverNetwork(
  deps: Deps,
  uid: string,
  id: string,
  fields: string[] | null,
  retrieveVectors: boolean,
): Promise<Buffer | null> {
  for (const target of networkTargets(deps)) {
    if (target.local) {
      const doc = await deps.registry.handle(uid).getDocument(id, fields, retrieveVectors);
      if (doc !== null) return doc;
      continue;
    }
    const r = await askInstance(deps, target, `/indexes/${encodeURIComponent(uid)}/documents/fetch`, {
      ids: [id],
      fields,
      retrieveVectors,
      useNetwork: false,
      limit: 1,
    });
    if (r.ok && Array.isArray(r.body.results) && r.body.results.length > 0)
      return Buffer.from(JSON.stringify(r.body.results[0]));
  }
  return null;
}
