/**
 * The network this instance belongs to (`GET/PATCH /network`): its own name, the other
 * instances (remotes) with their URLs and keys, the shards and which remotes hold each, and
 * the leader that receives every write. Stored in the meta store; a patch is validated and
 * merged here with Meilisearch's codes and messages, and applied by `routes/network.ts`.
 */
import { randomUUID } from 'node:crypto';
import { ApiError } from '../errors/api-error';
import { jsonValue, type Records } from '../store/durable';

export interface RemoteConfig {
  url: string;
  searchApiKey: string | null;
  writeApiKey: string | null;
}

export interface NetworkState {
  self: string | null;
  remotes: Record<string, RemoteConfig>;
  shards: Record<string, { remotes: string[] }>;
  leader: string | null;
  version: string;
}

/** The version of a network never configured. */
const NO_VERSION = '00000000-0000-0000-0000-000000000000';

const FIELDS = ['remotes', 'shards', 'previousShards', 'self', 'leader', 'previousRemotes'];
const REMOTE_FIELDS = ['url', 'searchApiKey', 'writeApiKey'];
const SHARD_FIELDS = ['remotes', 'addRemotes', 'removeRemotes'];

export class NetworkStore {
  #state: NetworkState;

  constructor(private readonly records: Records) {
    const stored = records.kv.get('meta', 'network');
    this.#state = stored
      ? (JSON.parse(stored.toString()) as NetworkState)
      : { self: null, remotes: {}, shards: {}, leader: null, version: NO_VERSION };
    records.watch('meta', (op) => {
      if (op.key === 'network' && op.value) this.#state = JSON.parse(op.value.toString()) as NetworkState;
    });
  }

  get(): NetworkState {
    return this.#state;
  }

  /** The wire view: every remote `available` (Quarry keeps no health record). */
  view(state: NetworkState = this.#state): Record<string, unknown> {
    const remotes = Object.fromEntries(
      Object.entries(state.remotes).map(([name, r]) => [name, { ...r, status: 'available' }]),
    );
    return { self: state.self, remotes, shards: state.shards, leader: state.leader, version: state.version };
  }

  async save(next: NetworkState): Promise<void> {
    await this.records.commit([{ db: 'meta', key: 'network', value: jsonValue(next) }]);
  }

  /**
   * The network after `body` (a partial network; `null` removes a remote or a shard). With
   * `replace` (a change the leader sends, with its `version`), `body` is the whole network. Throws on a malformed
   * body; the leader rule is the caller's.
   */
  plan(body: unknown, replace = false, version: string = randomUUID()): NetworkState {
    if (!isObject(body)) throw new ApiError('bad_request', 'Invalid value type: expected an object');
    for (const k of Object.keys(body)) {
      if (!FIELDS.includes(k))
        throw new ApiError(
          'bad_request',
          `Unknown field \`${k}\`: expected one of ${FIELDS.map((f) => `\`${f}\``).join(', ')}`,
        );
    }
    if (!replace) {
      for (const k of ['previousRemotes', 'previousShards']) {
        if (body[k] !== undefined)
          throw new ApiError(
            'unexpected_network_previous_remotes',
            `\`.${k}\` is only accepted in a network change sent by the leader.`,
          );
      }
    }
    const base: NetworkState = replace
      ? { self: null, remotes: {}, shards: {}, leader: null, version: this.#state.version }
      : this.#state;
    const next: NetworkState = {
      self: base.self,
      remotes: { ...base.remotes },
      shards: { ...base.shards },
      leader: base.leader,
      version,
    };
    if (body.self !== undefined) next.self = nameOrNull(body.self, 'self', 'invalid_network_self');
    if (body.leader !== undefined) next.leader = nameOrNull(body.leader, 'leader', 'invalid_network_leader');
    next.remotes = patchMap(next.remotes, body.remotes, 'remotes', 'invalid_network_remotes', remoteOf);
    next.shards = patchMap(next.shards, body.shards, 'shards', 'invalid_network_shards', shardOf);
    return next;
  }
}

/** With a leader, every shard names known remotes. */
export function checkShards(state: NetworkState): void {
  for (const [name, shard] of Object.entries(state.shards)) {
    for (const r of shard.remotes) {
      if (!(r in state.remotes))
        throw new ApiError('invalid_network_shards', `unknown remote \`${r}\` in \`.${name}.remotes\``);
    }
  }
}

/** The shards `self` holds, with every shard's name (what a document addition keeps). */
export function shardsOf(state: NetworkState): { all: string[]; own: string[] } | null {
  const all = Object.keys(state.shards);
  if (all.length === 0 || state.self === null) return null;
  return { all, own: all.filter((s) => state.shards[s].remotes.includes(state.self!)) };
}

/**
 * The instances a search over the network asks: one remote per shard (this instance for
 * the shards it holds), each asked once; without shards, every remote.
 */
export function searchTargets(state: NetworkState): string[] {
  const shards = Object.values(state.shards);
  if (shards.length === 0) return Object.keys(state.remotes);
  const chosen: string[] = [];
  for (const shard of shards) {
    if (shard.remotes.some((r) => chosen.includes(r))) continue;
    const pick =
      state.self !== null && shard.remotes.includes(state.self)
        ? state.self
        : shard.remotes.find((r) => r in state.remotes);
    if (pick !== undefined) chosen.push(pick);
  }
  return chosen;
}

/** `map` after `patch`: `null` empties it, a `null` entry removes that entry, others are merged by `entry`. */
function patchMap<T>(
  map: Record<string, T>,
  patch: unknown,
  field: string,
  code: string,
  entry: (name: string, raw: unknown, prev: T | undefined) => T,
): Record<string, T> {
  if (patch === undefined) return map;
  if (patch === null) return {};
  if (!isObject(patch))
    throw new ApiError(code, `Invalid value type at \`.${field}\`: expected an object, but found ${kind(patch)}`);
  const out = { ...map };
  for (const [name, raw] of Object.entries(patch)) {
    if (raw === null) delete out[name];
    else out[name] = entry(name, raw, out[name]);
  }
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function kind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return `a sequence: \`${JSON.stringify(v)}\``;
  if (typeof v === 'string') return `a string: \`${JSON.stringify(v)}\``;
  return `${typeof v === 'number' ? 'a positive integer' : typeof v === 'boolean' ? 'a boolean' : 'an object'}: \`${JSON.stringify(v)}\``;
}

function nameOrNull(v: unknown, field: string, code: string): string | null {
  if (v === null || typeof v === 'string') return v;
  throw new ApiError(code, `Invalid value type at \`.${field}\`: expected a string, but found ${kind(v)}`);
}

function remoteOf(name: string, raw: unknown, prev: RemoteConfig | undefined): RemoteConfig {
  const at = `.remotes.${name}`;
  if (!isObject(raw))
    throw new ApiError(
      'invalid_network_remotes',
      `Invalid value type at \`${at}\`: expected an object, but found ${kind(raw)}`,
    );
  for (const k of Object.keys(raw)) {
    if (!REMOTE_FIELDS.includes(k))
      throw new ApiError(
        'bad_request',
        `Unknown field \`${k}\` inside \`${at}\`: expected one of ${REMOTE_FIELDS.map((f) => `\`${f}\``).join(', ')}`,
      );
  }
  let url = prev?.url;
  if (raw.url !== undefined) {
    if (typeof raw.url !== 'string')
      throw new ApiError(
        'invalid_network_url',
        `Invalid value type at \`${at}.url\`: expected a string, but found ${kind(raw.url)}`,
      );
    let parsed: URL;
    try {
      parsed = new URL(raw.url);
    } catch {
      throw new ApiError('invalid_network_url', `Invalid \`${at}.url\` (\`${raw.url}\`): relative URL without a base`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new ApiError(
        'invalid_network_url',
        `Invalid \`${at}.url\` (\`${raw.url}\`): only \`http\` and \`https\` URLs are accepted`,
      );
    }
    url = raw.url;
  }
  if (url === undefined) throw new ApiError('missing_network_url', `Missing field \`${at}.url\``);
  const key = (field: 'searchApiKey' | 'writeApiKey', code: string): string | null => {
    const v = raw[field];
    if (v === undefined) return prev?.[field] ?? null;
    if (v === null || typeof v === 'string') return v;
    throw new ApiError(code, `Invalid value type at \`${at}.${field}\`: expected a string, but found ${kind(v)}`);
  };
  return {
    url,
    searchApiKey: key('searchApiKey', 'invalid_network_search_api_key'),
    writeApiKey: key('writeApiKey', 'invalid_network_write_api_key'),
  };
}

function shardOf(name: string, raw: unknown, prev: { remotes: string[] } | undefined): { remotes: string[] } {
  const at = `.shards.${name}`;
  if (!isObject(raw))
    throw new ApiError(
      'invalid_network_shards',
      `Invalid value type at \`${at}\`: expected an object, but found ${kind(raw)}`,
    );
  for (const k of Object.keys(raw)) {
    if (!SHARD_FIELDS.includes(k))
      throw new ApiError(
        'bad_request',
        `Unknown field \`${k}\` inside \`${at}\`: expected one of ${SHARD_FIELDS.map((f) => `\`${f}\``).join(', ')}`,
      );
  }
  const list = (field: string): string[] | undefined => {
    const v = raw[field];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) {
      throw new ApiError(
        'invalid_network_shards',
        `Invalid value type at \`${at}.${field}\`: expected an array of strings, but found ${kind(v)}`,
      );
    }
    return v as string[];
  };
  let remotes = list('remotes') ?? prev?.remotes ?? [];
  for (const r of list('addRemotes') ?? []) if (!remotes.includes(r)) remotes = [...remotes, r];
  const removed = list('removeRemotes') ?? [];
  remotes = remotes.filter((r) => !removed.includes(r));
  return { remotes };
}
