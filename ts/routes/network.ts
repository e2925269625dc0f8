/**
 * `GET/PATCH /network` (behind the `network` experimental feature). Without a leader a patch
 * applies at once and answers the network (200). With one, it answers the task that carries
 * the change (202): see `commands/network.ts`.
 */
import { type Request, type Response, Router } from 'express';
import { updateNetwork } from '../commands/network';
import type { Deps } from '../deps';
import { ApiError } from '../errors/api-error';
import { readJson } from '../http/body';
import { originOf } from '../http/network-context';
import { summaryView } from '../tasks/queue';

const FEATURE_LINK = 'https://github.com/orgs/meilisearch/discussions/805';

export function networkRoutes(deps: Deps): Router {
  const r = Router();
  const { guard, network } = deps;

  function requireFeature(action: string): void {
    if (!deps.features.get().network) {
      throw new ApiError(
        'feature_not_enabled',
        `${action} requires enabling the \`network\` experimental feature. See ${FEATURE_LINK}`,
      );
    }
  }

  r.get('/network', guard('network.get', 'none'), (_req: Request, res: Response) => {
    requireFeature('Using the /network route');
    res.status(200).json(network.view());
  });

  r.patch('/network', guard('network.update', 'none'), async (req: Request, res: Response) => {
    const origin = originOf(req);
    requireFeature(origin ? 'receiving a proxied network task' : 'Using the /network route');
    const change = await updateNetwork(deps, readJson(req), origin);
    if ('task' in change) res.status(202).json(summaryView(change.task));
    else res.status(200).json(change.network);
  });

  return r;
}
