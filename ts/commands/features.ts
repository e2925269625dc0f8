/** The experimental features (`PATCH /experimental-features`); the store is `features.ts`. */
import type { Deps } from '../deps';
import type { Features } from '../features';

/** Turns features on or off by a request's body (`{flag: bool | null}`, checked by the store); every flag after. */
export function updateExperimentalFeatures(deps: Deps, body: unknown): Promise<Features> {
  return deps.features.patch(body);
}
