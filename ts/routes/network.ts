/**
 * `GET/PATCH /network` (behind the `network` experimental feature). Without a leader a patch
 * applies at once and answers the network. With one, the patch must reach the leader, which
 * sends the whole network to every other instance (each under its own name) and only then
 * applies it and enqueues a `networkTopologyChange` task (202).
 */
import { type Request, type Response, Router } from 'express';
import type { Deps } from '../deps';
import { ApiError } from '../errors/api-error';
import { readJson } from '../http/body';
import { forwardToAll, notLeader, originOf } from '../network/forward';
import { checkShards } from '../network/state';
import { summaryView } from '../tasks/queue';

const FEATURE_LINK = 'https://github.com/orgs/meilisearch/discussions/805';

export function networkRoutes(deps: Deps): Router {
  const r = Router();
  const { guard, network, queue } = deps;

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
    const body = readJson(req);
    if (origin) {
      // The leader's change: the whole network, this instance's name in `self`.
      await network.save(network.plan(body, true, origin.networkVersion));
      const task = await queue.enqueue({
        indexUid: null,
        type: 'networkTopologyChange',
        details: null,
        payload: { kind: 'networkTopologyChange' },
        network: { origin },
      });
      res.status(202).json(summaryView(task));
      return;
    }
    const next = network.plan(body);
    if (next.leader !== null && next.self !== next.leader) throw notLeader(next.leader);
    if (next.leader === null) {
      await network.save(next);
      res.status(200).json(network.view(next));
      return;
    }
    checkShards(next);
    const pending = queue.list(
      { types: new Set(['networkTopologyChange']), statuses: new Set(['enqueued', 'processing']) },
      1,
      null,
      false,
      () => true,
    ).results[0];
    if (pending) {
      throw new ApiError(
        'unprocessed_network_task',
        `Already has a pending network task with uid ${pending.uid}.\n  - Note: No network task can be registered while any previous network task is not done processing.\n  - Hint: Wait for task ${pending.uid} to complete or cancel it.`,
      );
    }
    const remoteTasks = await forwardToAll(
      { ...next, self: next.self, version: next.version },
      'PATCH',
      '/network',
      'application/json',
      (name) =>
        Buffer.from(JSON.stringify({ self: name, leader: next.leader, remotes: next.remotes, shards: next.shards })),
      deps.config.remoteTimeoutMs,
    );
    await network.save(next);
    const task = await queue.enqueue({
      indexUid: null,
      type: 'networkTopologyChange',
      details: null,
      payload: { kind: 'networkTopologyChange' },
      network: { remote_tasks: remoteTasks, network_version: next.version },
    });
    res.status(202).json(summaryView(task));
  });

  return r;
}
