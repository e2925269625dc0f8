/**
 * A `networkTopologyChange` task, on every instance: the network is already stored (the
 * leader sent it to every instance before any of them enqueued its task). The leader sends
 * every index's settings to the other instances (an instance that just joined gets the
 * indexes); then each instance sends the documents whose shard it no longer holds to the
 * instances that hold it, and deletes them once every such instance has accepted them
 * (answered 202: on its disk).
 * Nothing waits for the other instances' tasks to run: their workers may be moving documents
 * here at the same moment.
 */
import { ApiError } from '../errors/api-error';
import type { IndexRegistry } from '../indexes/registry';
import { sendTo } from './ask';
import { remoteFailure } from './ask';
import { ORIGIN_HEADER, type Origin } from './forward';
import { type NetworkStore, shardsOf } from './state';

interface Moves {
  primaryKey: string | null;
  moves: Array<{ shard: string; ids: string[]; documents: unknown[] }>;
}

export function rebalancer(
  network: NetworkStore,
  registry: IndexRegistry,
  timeoutMs: number,
): (taskUid: number) => Promise<Record<string, unknown>> {
  return async (taskUid) => {
    const state = network.get();
    const shards = shardsOf(state);
    if (shards === null || state.leader === null || state.self === null)
      return { movedDocuments: 0, message: 'Finished' };
    const origin: Origin = { remoteName: state.self, taskUid, networkVersion: state.version };
    const send = async (name: string, method: string, path: string, body: unknown, what: string) => {
      const remote = state.remotes[name];
      const answer = await sendTo(
        remote,
        method,
        path,
        body,
        remote.writeApiKey,
        { [ORIGIN_HEADER]: JSON.stringify(origin) },
        timeoutMs,
      );
      const failure = remoteFailure(name, answer);
      if (failure) throw new ApiError(failure.code, `${what}: ${failure.message}`);
    };
    let moved = 0;
    for (const entry of registry.list()) {
      const handle = registry.handleOf(entry);
      const path = `/indexes/${encodeURIComponent(entry.uid)}`;
      if (state.self === state.leader) {
        // Experimental settings need their feature on the other side; they stay here.
        const { foreignKeys: _f, chat: _c, ...settings } = handle.settings();
        for (const name of Object.keys(state.remotes)) {
          if (name !== state.self)
            await send(name, 'PATCH', `${path}/settings`, settings, `Sending the settings of \`${entry.uid}\``);
        }
      }
      const found = JSON.parse((await handle.documentsElsewhere(shards)).toString()) as Moves;
      for (const m of found.moves) {
        for (const name of state.shards[m.shard]?.remotes ?? []) {
          if (name === state.self || state.remotes[name] === undefined) continue;
          const pk = encodeURIComponent(found.primaryKey ?? '');
          await send(
            name,
            'POST',
            `${path}/documents?primaryKey=${pk}`,
            m.documents,
            `Moving ${m.ids.length} documents of \`${entry.uid}\` to shard \`${m.shard}\``,
          );
        }
        const [r] = await handle.applyBatch([{ type: 'deleteDocuments', taskUid, ids: m.ids }]);
        if (!r.ok) throw new ApiError(r.error.code, r.error.message);
        moved += m.ids.length;
      }
    }
    return { movedDocuments: moved, message: 'Finished' };
  };
}
