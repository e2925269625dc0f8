/**
 * Changes of the network (`PATCH /network`, the `network` experimental feature). Without a
 * leader a change applies at once. With one, the change must reach the leader, which sends the
 * whole network to every other instance (each under its own name) and only then applies it
 * and enqueues a `networkTopologyChange` task; an instance receiving the leader's change
 * applies it and enqueues its own task.
 */
import type { Deps } from '../deps';
import { ApiError } from '../errors/api-error';
import { forwardToAll, notLeader, type Origin } from '../network/forward';
import { checkShards } from '../network/state';
import type { TaskRecord } from '../tasks/types';

/** What a change answers: the network, applied at once (no leader), or the task that carries it. */
export type NetworkChange = { network: Record<string, unknown> } | { task: TaskRecord };

/**
 * Applies `body` (a partial network, checked by `NetworkStore.plan`), or with `origin` (the
 * leader's request) the whole network the leader sent.
 */
export async function updateNetwork(deps: Deps, body: unknown, origin: Origin | null): Promise<NetworkChange> {
  const { network, queue } = deps;
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
    return { task };
  }
  const next = network.plan(body);
  if (next.leader !== null && next.self !== next.leader) throw notLeader(next.leader);
  if (next.leader === null) {
    await network.save(next);
    return { network: network.view(next) };
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
  return { task };
}
