/**
 * Chat workspaces (`/chats`): the settings of each workspace (the LLM provider, its key, the
 * prompts), kept in the `chats` database as Meilisearch 1.50 shows them, one record per
 * workspace. They are instance-wide records like keys and webhooks: written through `Records`,
 * so a replicated group changes them through its log, and the in-memory view follows every
 * committed op (`watch`). A workspace exists once its settings were patched; a GET of the
 * settings of one that does not exist is `chat_not_found`, as in Meilisearch.
 *
 * Validation and messages are Meilisearch's (deserr's words, the first bad field in body
 * order, each field with its code); views hide `apiKey` as it does (`hideSecret`).
 */
import { ApiError } from '../errors/api-error';
import { hideSecret } from '../native';
import {
  compareBytes,
  DeserrError,
  incorrectType,
  isObject,
  type Loc,
  oneOf,
  string,
  unknownField,
} from '../settings/deserr';
import { jsonValue, type Records } from '../store/durable';

const DB = 'chats';

export const CHAT_SOURCES = ['openAi', 'mistral', 'azureOpenAi', 'vLlm'] as const;
export type ChatSource = (typeof CHAT_SOURCES)[number];

export interface ChatPrompts {
  system: string;
  searchDescription: string;
  searchQParam: string;
  searchFilterParam: string;
  searchIndexUidParam: string;
}

export interface ChatWorkspaceSettings {
  source: ChatSource;
  orgId: string | null;
  projectId: string | null;
  apiVersion: string | null;
  deploymentId: string | null;
  baseUrl: string | null;
  apiKey: string | null;
  prompts: ChatPrompts;
}

/** Meilisearch 1.50's default prompts, as its API shows them. */
export const DEFAULT_PROMPTS: ChatPrompts = {
  system:
    'You are a highly capable research assistant with access to powerful search tools. IMPORTANT INSTRUCTIONS:1. When answering questions, you MUST make multiple tool calls (at least 2-3) to gather comprehensive information.2. Use different search queries for each tool call - vary keywords, rephrase questions, and explore different semantic angles to ensure broad coverage.3. Always explicitly announce BEFORE making each tool call by saying: "I\'ll search for [specific information] now."4. Combine information from ALL tool calls to provide complete, nuanced answers rather than relying on a single source.5. For complex topics, break down your research into multiple targeted queries rather than using a single generic search. Meilisearch doesn\'t use the colon (:) syntax to filter but rather the equal (=) one. Separate filters from query and keep the q parameter empty if needed. Same for the filter parameter: keep it empty if need be. If you need to find documents that CONTAINS keywords simply put the keywords in the q parameter do no use a filter for this purpose. Whenever you get an error, read the error message and fix your error. ',
  searchDescription:
    'Query: \'best story about Rust before 2018\' with year: 2018, 2020, 2021\nlabel: analysis, golang, javascript\ntype: story, link\nvote: 300, 298, 278\n: {"q": "", "filter": "category = Rust AND type = story AND year < 2018 AND vote > 100"}\nQuery: \'A black or green car that can go fast with red brakes\' with maxspeed_kmh: 200, 150, 130\ncolor: black, grey, red, green\nbrand: Toyota, Renault, Jeep, Ferrari\n: {"q": "red brakes", "filter": "maxspeed_kmh > 150 AND color IN [\'black\', green]"}\nQuery: \'Superman movie released in 2018 or after\' with year: 2018, 2020, 2021\ngenres: Drama, Comedy, Adventure, Fiction\n: {"q":"Superman","filter":"genres IN [Adventure, Fiction] AND year >= 2018"}',
  searchQParam:
    'The search query string used to find relevant documents in the index. This should contain keywords or phrases that best represent what the user is looking for. More specific queries will yield more precise results.',
  searchFilterParam:
    'The search filter string used to find relevant documents in the index. It supports parentheses, `=`, `!=`, `>=`, `>`, `<=`, `<`, `IN`, `NOT IN`, `TO`, `EXISTS`, `NOT EXISTS`, `IS NULL`, `IS NOT NULL`, `IS EMPTY`, `IS NOT EMPTY`, `_geoRadius`, or `_geoBoundingBox`. Here is an example: "price > 100 AND category = \'electronics\'". The following is a list of fields that can be filtered on: ',
  searchIndexUidParam:
    'The name of the index to search within. An index is a collection of documents organized for search. Selecting the right index ensures the most relevant results for the user query.',
};

export function defaultChatSettings(): ChatWorkspaceSettings {
  return {
    source: 'openAi',
    orgId: null,
    projectId: null,
    apiVersion: null,
    deploymentId: null,
    baseUrl: null,
    apiKey: null,
    prompts: { ...DEFAULT_PROMPTS },
  };
}

/** The settings as the API shows them: `apiKey` hidden. */
export function chatSettingsView(s: ChatWorkspaceSettings): ChatWorkspaceSettings {
  return { ...s, prompts: { ...s.prompts }, apiKey: s.apiKey === null ? null : hideSecret(s.apiKey) };
}

const FIELDS = ['source', 'orgId', 'projectId', 'apiVersion', 'deploymentId', 'baseUrl', 'apiKey', 'prompts'] as const;
const PROMPT_FIELDS = [
  'system',
  'searchDescription',
  'searchQParam',
  'searchFilterParam',
  'searchIndexUidParam',
] as const;

/** Each field's code when its value is refused (`source` and `prompts` itself are `bad_request`). */
const FIELD_CODES: Record<string, string> = {
  source: 'bad_request',
  orgId: 'invalid_chat_completion_org_id',
  projectId: 'invalid_chat_completion_project_id',
  apiVersion: 'invalid_chat_completion_api_version',
  deploymentId: 'invalid_chat_completion_deployment_id',
  baseUrl: 'invalid_chat_completion_base_api',
  apiKey: 'invalid_chat_completion_api_key',
  prompts: 'bad_request',
};
const PROMPT_CODES: Record<string, string> = {
  system: 'invalid_chat_completion_system_prompt',
  searchDescription: 'invalid_chat_completion_search_description_prompt',
  searchQParam: 'invalid_chat_completion_search_query_param_prompt',
  searchFilterParam: 'invalid_chat_completion_search_filter_param_prompt',
  searchIndexUidParam: 'invalid_chat_completion_search_index_uid_param_prompt',
};

/** A patch: absent = unchanged, null = reset to the default. */
export type ChatSettingsPatch = {
  [K in Exclude<keyof ChatWorkspaceSettings, 'prompts'>]?: ChatWorkspaceSettings[K] | null;
} & {
  prompts?: { [K in keyof ChatPrompts]?: string | null } | null;
};

function withCode<T>(code: string, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (err instanceof DeserrError) throw new ApiError(code, err.message);
    throw err;
  }
}

/** Reads a `PATCH /chats/{workspace}/settings` body, first bad field first. */
export function parseChatSettingsPatch(body: unknown): ChatSettingsPatch {
  if (!isObject(body)) throw new ApiError('bad_request', incorrectType(body, ['object'], []).message);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (!(FIELDS as readonly string[]).includes(key))
      throw new ApiError('bad_request', unknownField(key, FIELDS, []).message);
    if (value === null) {
      out[key] = null;
      continue;
    }
    const loc: Loc = [key];
    if (key === 'source') out.source = withCode('bad_request', () => oneOf(CHAT_SOURCES)(value, loc));
    else if (key === 'prompts') out.prompts = parsePrompts(value);
    else out[key] = withCode(FIELD_CODES[key], () => string(value, loc));
  }
  return out as ChatSettingsPatch;
}

function parsePrompts(value: unknown): Record<string, string | null> {
  if (!isObject(value)) throw new ApiError('bad_request', incorrectType(value, ['object'], ['prompts']).message);
  const out: Record<string, string | null> = {};
  for (const [key, v] of Object.entries(value)) {
    if (!(PROMPT_FIELDS as readonly string[]).includes(key))
      throw new ApiError('bad_request', unknownField(key, PROMPT_FIELDS, ['prompts']).message);
    out[key] = v === null ? null : withCode(PROMPT_CODES[key], () => string(v, ['prompts', key]));
  }
  return out;
}

/** `current` with `patch` applied: given fields replace, null ones go back to their default. */
export function applyChatSettingsPatch(
  current: ChatWorkspaceSettings,
  patch: ChatSettingsPatch,
): ChatWorkspaceSettings {
  const defaults = defaultChatSettings();
  const next: ChatWorkspaceSettings = { ...current, prompts: { ...current.prompts } };
  for (const key of FIELDS) {
    if (key === 'prompts') continue;
    const v = patch[key];
    if (v === undefined) continue;
    (next as unknown as Record<string, unknown>)[key] = v === null ? defaults[key] : v;
  }
  if (patch.prompts === null) next.prompts = defaults.prompts;
  else if (patch.prompts) {
    for (const key of PROMPT_FIELDS) {
      const v = patch.prompts[key];
      if (v !== undefined) next.prompts[key] = v === null ? DEFAULT_PROMPTS[key] : v;
    }
  }
  return next;
}

/** Meilisearch's check of a workspace's settings once the patch is applied. */
function checkSource(s: ChatWorkspaceSettings): void {
  if (s.source === 'azureOpenAi' && (s.baseUrl === null || s.deploymentId === null || s.apiVersion === null)) {
    throw new ApiError(
      'bad_request',
      'azureOpenAi requires setting a valid `baseUrl`, `deploymentId`, and `apiVersion`',
    );
  }
  if (s.source === 'vLlm' && s.baseUrl === null)
    throw new ApiError('bad_request', 'vLlm requires setting a valid `baseUrl`');
}

export function chatNotFound(uid: string): ApiError {
  return new ApiError('chat_not_found', `Chat \`${uid}\` not found`);
}

export class ChatStore {
  readonly #workspaces = new Map<string, ChatWorkspaceSettings>();

  constructor(private readonly records: Records) {
    for (const { key, value } of records.kv.scan(DB)) this.#workspaces.set(key, readRecord(value));
    records.watch(DB, (op) => {
      if (!op.value) this.#workspaces.delete(op.key);
      else this.#workspaces.set(op.key, readRecord(op.value));
    });
  }

  /** The workspaces' uids, in byte order. */
  uids(): string[] {
    return [...this.#workspaces.keys()].sort(compareBytes);
  }

  /** A workspace's settings (with its `apiKey` in clear), or null. */
  get(uid: string): ChatWorkspaceSettings | null {
    const s = this.#workspaces.get(uid);
    return s ? { ...s, prompts: { ...s.prompts } } : null;
  }

  /** Applies a patch (`parseChatSettingsPatch`), creating the workspace if needed; the settings as stored. */
  async patch(uid: string, patch: ChatSettingsPatch): Promise<ChatWorkspaceSettings> {
    const next = applyChatSettingsPatch(this.get(uid) ?? defaultChatSettings(), patch);
    checkSource(next);
    await this.records.commit([{ db: DB, key: uid, value: jsonValue(next) }]);
    return next;
  }

  /** Resets a workspace's settings to the defaults (the workspace stays). */
  async reset(uid: string): Promise<ChatWorkspaceSettings> {
    if (!this.#workspaces.has(uid)) throw chatNotFound(uid);
    const next = defaultChatSettings();
    await this.records.commit([{ db: DB, key: uid, value: jsonValue(next) }]);
    return next;
  }

  /** Deletes a workspace; false when there was none. */
  async delete(uid: string): Promise<boolean> {
    if (!this.#workspaces.has(uid)) return false;
    await this.records.commit([{ db: DB, key: uid, value: null }]);
    return true;
  }

  /** Every workspace with its settings in clear (what a dump carries). */
  all(): Array<[string, ChatWorkspaceSettings]> {
    return this.uids().map((uid) => [uid, this.get(uid)!]);
  }

  /** Replaces every workspace (a dump's). */
  async replaceAll(entries: Array<[string, ChatWorkspaceSettings]>): Promise<void> {
    const keep = new Set(entries.map(([uid]) => uid));
    const gone = [...this.#workspaces.keys()].filter((k) => !keep.has(k));
    await this.records.commit([
      ...gone.map((k) => ({ db: DB, key: k, value: null })),
      ...entries.map(([uid, s]) => ({ db: DB, key: uid, value: jsonValue(s) })),
    ]);
  }
}

/** A stored record, missing fields filled with the defaults (a dump of an older release may lack some). */
export function readRecord(value: Buffer | string): ChatWorkspaceSettings {
  const raw = JSON.parse(value.toString()) as Partial<ChatWorkspaceSettings>;
  const d = defaultChatSettings();
  return { ...d, ...raw, prompts: { ...d.prompts, ...(raw.prompts ?? {}) } };
}
