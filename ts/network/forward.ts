/**
 * Writes in a network with a leader. The leader sends every index write it accepts to each
 * other instance before it enqueues its own task (so a 202 from the leader means every
 * instance has the write); the others refuse writes that do not come from the leader
 * (`not_leader`). A document addition keeps, on each instance, only the documents of the
 * shards that instance holds (the engine decides, by a hash of the id).
 *
 * Routes do not know any of this: the queue they are given is wrapped here, and the request
 * being answered is found through an AsyncLocalStorage set by {@link withIncoming} (the
 * HTTP layer's `networkContext` middleware calls it for each request).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { ApiError } from '../errors/api-error';
import { badResponse, remoteFailure, sendTo } from './ask';
import type { FeatureStore } from '../features';
import type { EnqueueInit, TaskQueue } from '../tasks/queue';
import type { TaskType } from '../tasks/types';
import { type NetworkState, type NetworkStore, shardsOf } from './state';

/** The header a leader's forwarded request carries: `{remoteName, taskUid, networkVersion}`. */
export const ORIGIN_HEADER = 'Quarry-Network-Origin';

export interface Origin {
  remoteName: string;
  taskUid: number | null;
  networkVersion: string;
}

/** An incoming request, as the queue below needs it to forward the write it enqueues. */
export interface Incoming {
  method: string;
  url: string;
  contentType: string | undefined;
  body: Buffer;
  origin: Origin | null;
}

const current = new AsyncLocalStorage<Incoming>();

/** The writes a leader forwards. */
const FORWARDED = new Set<TaskType>([
  'documentAdditionOrUpdate',
  'documentEdition',
  'documentDeletion',
  'settingsUpdate',
  'indexCreation',
  'indexUpdate',
  'indexDeletion',
  'indexSwap',
]);

/** Runs `next` with `incoming` as the request being answered, for the queue below. */
export function withIncoming(incoming: Incoming, next: () => void): void {
  current.run(incoming, next);
}

/** The origin a leader's request names in its `ORIGIN_HEADER` value, if it carries one. */
export function parseOrigin(raw: string | undefined): Origin | null {
  if (raw === undefined) return null;
  try {
    const o = JSON.parse(raw) as Partial<Origin>;
    if (typeof o.remoteName === 'string' && typeof o.networkVersion === 'string') {
      return {
        remoteName: o.remoteName,
        taskUid: typeof o.taskUid === 'number' ? o.taskUid : null,
        networkVersion: o.networkVersion,
      };
    }
  } catch {
    // fall through
  }
  throw new ApiError(
    'bad_request',
    `Invalid \`${ORIGIN_HEADER}\` header: expected \`{"remoteName","taskUid","networkVersion"}\``,
  );
}

export function notLeader(leader: string): ApiError {
  return new ApiError(
    'not_leader',
    `This remote is not the leader of the network.\n  - Note: only the leader \`${leader}\` can receive new tasks.`,
  );
}

/** The queue routes use: the same, with index writes forwarded as described above. */
export function networkedQueue(
  queue: TaskQueue,
  network: NetworkStore,
  features: FeatureStore,
  timeoutMs: number,
): TaskQueue {
  async function enqueue(init: EnqueueInit) {
    const incoming = current.getStore();
    const state = network.get();
    if (!incoming || !FORWARDED.has(init.type) || !features.get().network || state.leader === null)
      return queue.enqueue(init);
    const shards = shardsOf(state);
    if (init.payload.kind === 'documentAddition' && shards !== null)
      init = { ...init, payload: { ...init.payload, shards } };
    if (incoming.origin !== null) {
      checkVersion(state, incoming.origin);
      return queue.enqueue({ ...init, network: { origin: incoming.origin } });
    }
    if (state.self !== state.leader) throw notLeader(state.leader);
    const remoteTasks = await forwardToAll(
      state,
      incoming.method,
      incoming.url,
      incoming.contentType,
      () => incoming.body,
      timeoutMs,
    );
    return queue.enqueue({ ...init, network: { remote_tasks: remoteTasks, network_version: state.version } });
  }
  return new Proxy(queue, {
    get(target, prop) {
      if (prop === 'enqueue') return enqueue;
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

function checkVersion(state: NetworkState, origin: Origin): void {
  if (origin.networkVersion !== state.version) {
    throw new ApiError(
      'network_version_mismatch',
      `The leader \`${origin.remoteName}\` sent a task for network version \`${origin.networkVersion}\`, but this instance is at version \`${state.version}\`.\n  - Hint: apply the leader's network change first`,
    );
  }
}

/**
 * Sends `method url` to every instance but this one, with its write key and this instance as
 * the origin; resolves to each one's task uid. The first instance that does not accept the
 * request fails the whole write (those reached before it apply it: every forwarded write is
 * safe to send again).
 */
export async function forwardToAll(
  state: NetworkState,
  method: string,
  url: string,
  contentType: string | undefined,
  bodyFor: (name: string) => Buffer,
  timeoutMs: number,
): Promise<Record<string, { taskUid: number | null; error: null }>> {
  const origin: Origin = { remoteName: state.self!, taskUid: null, networkVersion: state.version };
  const others = Object.entries(state.remotes).filter(([name]) => name !== state.self);
  const answers = await Promise.all(
    others.map(async ([name, remote]) => {
      const headers: Record<string, string> = { [ORIGIN_HEADER]: JSON.stringify(origin) };
      if (contentType !== undefined) headers['Content-Type'] = contentType;
      return [name, await sendTo(remote, method, url, bodyFor(name), remote.writeApiKey, headers, timeoutMs)] as const;
    }),
  );
  const out: Record<string, { taskUid: number | null; error: null }> = {};
  for (const [name, answer] of answers) {
    const failure = remoteFailure(name, answer);
    if (failure) throw failure;
    let taskUid: number | null = null;
    try {
      const parsed = JSON.parse(answer.body.toString()) as { taskUid?: unknown };
      if (typeof parsed.taskUid === 'number') taskUid = parsed.taskUid;
    } catch {
      throw badResponse(name, answer.body);
    }
    out[name] = { taskUid, error: null };
  }
  return out;
}
