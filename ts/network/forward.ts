/**
 * Writes in a network with a leader. The leader sends every index write it accepts to each
 * other instance before it enqueues its own task (so a 202 from the leader means every
 * instance has the write); the others refuse writes that do not come from the leader
 * (`not_leader`). A document addition keeps, on each instance, only the documents of the
 * shards that instance holds (the engine decides, by a hash of the id).
 *
 * Routes do not know any of this: the queue they are given is wrapped here, and the request
 * being answered is found through an AsyncLocalStorage set by {@link networkContext}.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../errors/api-error';
import { catalogByCode } from '../native';
import type { OutboundAnswer } from '../native/outbound';
import { sendTo } from './ask';
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

interface Incoming {
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

/** Middleware: remembers the request being answered, for the queue below. */
export function networkContext(req: Request, _res: Response, next: NextFunction): void {
  const raw = req.body as unknown;
  current.run(
    {
      method: req.method,
      url: req.originalUrl,
      contentType: req.headers['content-type'],
      body: Buffer.isBuffer(raw) ? raw : Buffer.alloc(0),
      origin: originOf(req),
    },
    next,
  );
}

/** The origin a leader's request names, if it carries one. */
export function originOf(req: Request): Origin | null {
  const raw = req.get(ORIGIN_HEADER);
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

/**
 * Why an instance's answer is not a success, with Meilisearch's codes; null when it is. An
 * instance that cannot be reached is `unreachable` (a write: `remote_could_not_send_request`;
 * a read, reported in `remoteErrors`: `proxy_could_not_send_request`, as the search's).
 */
export function remoteFailure(
  name: string,
  a: OutboundAnswer,
  unreachable = 'remote_could_not_send_request',
): ApiError | null {
  if (a.failure === 'timeout')
    return new ApiError(
      'remote_timeout',
      `Remote \`${name}\` did not answer within the time allowed: ${a.message ?? ''}`,
    );
  if (a.failure !== null)
    return new ApiError(unreachable, `Could not send the request to remote \`${name}\`: ${a.message ?? ''}`);
  if (a.status >= 200 && a.status < 300) return null;
  if (a.status === 401 || a.status === 403) {
    return new ApiError(
      'remote_invalid_api_key',
      `could not authenticate against the remote \`${name}\`\n  - hint: check that the remote was registered with a valid \`writeApiKey\``,
    );
  }
  try {
    const e = JSON.parse(a.body.toString()) as { code?: unknown; message?: unknown };
    if (typeof e.code === 'string' && typeof e.message === 'string') {
      const code = catalogByCode().has(e.code) ? e.code : 'remote_remote_error';
      return new ApiError(code, `Remote \`${name}\` encountered an error: ${e.message}`);
    }
  } catch {
    // fall through
  }
  return badResponse(name, a.body);
}

function badResponse(name: string, body: Buffer): ApiError {
  return new ApiError(
    'remote_bad_response',
    `could not parse the response of remote \`${name}\`:\n  - response from remote: ${body.toString().slice(0, 200)}`,
  );
}
