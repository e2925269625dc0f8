/**
 * A chat completion (`POST /chats/{workspace}/chat/completions`), as Meilisearch 1.50 runs one:
 * the client's OpenAI request goes to the workspace's provider with the workspace's system
 * prompt first and one tool, `_meiliSearchInIndex` (`index_uid`, `q`, `filter`), whose
 * description lists the indexes the caller may reach with their `chat.description`, and whose
 * `filter` description their facet values. When the model calls it, Quarry runs the search
 * (as the caller: key scopes and tenant tokens apply, with the index's `chat.searchParameters`),
 * renders the hits with the index's `chat.documentTemplate` and gives the text back to the
 * model, up to 20 rounds, until the model answers. The model's content chunks are forwarded to
 * the client; the client may declare three reporting tools, which are never sent to the model:
 * `_meiliSearchProgress` (each search as it starts), `_meiliSearchSources` (the hits, as the
 * index displays them) and `_meiliAppendConversationMessage` (the tool call and its result, to
 * keep in the conversation). Each arrives as a tool-call chunk.
 *
 * Nothing here knows HTTP: the route gives a `send` that writes one server-sent event, waits
 * until the client has read enough to take another, and says whether the client is still
 * there. Each send is awaited, so a client that reads slowly holds the conversation back (no
 * next provider round starts before the last one's events were taken).
 */
import { randomUUID } from 'node:crypto';
import type { AuthContext } from '../auth/guard';
import type { Deps } from '../deps';
import { ApiError } from '../errors/api-error';
import { statusOf } from '../errors/catalog';
import { renderTemplate } from '../native';
import type { SearchService } from '../search/service';
import type { ChatSettings } from '../settings/types';
import { callProvider, errorEvent, type StreamErrorEvent } from './provider';
import type { ChatWorkspaceSettings } from './settings';

export const SEARCH_IN_INDEX = '_meiliSearchInIndex';
export const SEARCH_PROGRESS = '_meiliSearchProgress';
export const SEARCH_SOURCES = '_meiliSearchSources';
export const APPEND_MESSAGE = '_meiliAppendConversationMessage';

/** Most provider rounds one completion runs (each answers the searches of the one before). */
const MAX_ROUNDS = 20;
/** Values of each facet the filter description lists. */
const FACET_VALUES = 10;

/**
 * Sends one event (`[DONE]` as is, anything else as JSON); resolves once the next may be sent
 * (the client has read enough), false once the client is gone or was cut.
 */
export type Send = (data: unknown) => Promise<boolean>;

interface Reporting {
  progress: boolean;
  sources: boolean;
  append: boolean;
}

type Json = Record<string, unknown>;

const ROLES = ['developer', 'system', 'user', 'assistant', 'tool', 'function'];

/** Where the last closing brace of `text` is, as serde_json counts (1-based line and column). */
function endOf(text: string): string {
  const at = text.lastIndexOf('}');
  const before = text.slice(0, at + 1).split('\n');
  return `line ${before.length} column ${before[before.length - 1].length}`;
}

/** " at line L column C" after the `i`-th message's role in `text`, as serde_json places it (empty when not found). */
function roleAt(text: string, i: number): string {
  const matches = [...text.matchAll(/"role"\s*:\s*("(?:[^"\\]|\\.)*"|[^,}\]\s]+)/g)];
  const m = matches[i];
  if (!m || m.index === undefined) return '';
  const end = m.index + m[0].length;
  const lines = text.slice(0, end).split('\n');
  return ` at line ${lines.length} column ${lines[lines.length - 1].length}`;
}

function deserializeError(message: string): ApiError {
  return new ApiError('bad_request', `Json deserialize error: ${message}`);
}

/** Checks a request body as Meilisearch's OpenAI types read it (the fields the conversation relies on). */
export function checkCompletionRequest(body: unknown, text: string): Json {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw deserializeError(
      `invalid type: ${Array.isArray(body) ? 'sequence' : typeof body === 'string' ? `string ${JSON.stringify(body)}` : String(body)}, expected struct CreateChatCompletionRequest at ${endOf(text)}`,
    );
  }
  const b = body as Json;
  if (!Array.isArray(b.messages)) {
    if (b.messages === undefined) throw deserializeError(`missing field \`messages\` at ${endOf(text)}`);
    throw deserializeError(`invalid type: expected a sequence at \`messages\``);
  }
  if (typeof b.model !== 'string') {
    if (b.model === undefined) throw deserializeError(`missing field \`model\` at ${endOf(text)}`);
    throw deserializeError(`invalid type: expected a string at \`model\``);
  }
  for (const [i, m] of b.messages.entries()) {
    const role = m !== null && typeof m === 'object' ? (m as Json).role : undefined;
    if (typeof role !== 'string' || !ROLES.includes(role)) {
      throw deserializeError(
        `unknown variant \`${String(role)}\`, expected one of ${ROLES.map((r) => `\`${r}\``).join(', ')}${roleAt(text, i)}`,
      );
    }
  }
  if (b.stream !== undefined && b.stream !== null && typeof b.stream !== 'boolean')
    throw deserializeError('invalid type: expected a boolean at `stream`');
  if (b.tools !== undefined && b.tools !== null && !Array.isArray(b.tools))
    throw deserializeError('invalid type: expected a sequence at `tools`');
  return b;
}

/** Meilisearch's refusal of `n` other than 1 (checked before anything else is looked up). */
export function checkSingleChoice(b: Json): void {
  if (b.n !== undefined && b.n !== null && b.n !== 1) {
    throw new ApiError(
      'unimplemented_multi_choice_chat_completions',
      `You tried to specify n = ${String(b.n)} but only single choices are supported (n = 1).`,
    );
  }
}

function toolName(tool: unknown): string {
  const f = tool !== null && typeof tool === 'object' ? (tool as Json).function : undefined;
  const name = f !== null && typeof f === 'object' ? (f as Json).name : undefined;
  return typeof name === 'string' ? name : '';
}

/** The client's tools: only the reporting tools are accepted, and they are taken out of the model's request. */
function reportingTools(tools: unknown[]): Reporting {
  const out: Reporting = { progress: false, sources: false, append: false };
  for (const tool of tools) {
    const name = toolName(tool);
    if (name === SEARCH_IN_INDEX) throw new ApiError('bad_request', `${SEARCH_IN_INDEX} function is already defined.`);
    if (name === SEARCH_PROGRESS) out.progress = true;
    else if (name === SEARCH_SOURCES) out.sources = true;
    else if (name === APPEND_MESSAGE) out.append = true;
    else
      throw new ApiError(
        'unimplemented_external_function_calling',
        `${name}: External functions are not supported yet.`,
      );
  }
  return out;
}

/** OpenAI's older models take the system prompt as `system`, the newer ones as `developer` (Meilisearch's rule). */
function systemRole(s: ChatWorkspaceSettings, model: string): 'system' | 'developer' {
  if (s.source === 'mistral' || s.source === 'vLlm') return 'system';
  const old = ['gpt-3.5', 'gpt-4', 'gpt-4.1', 'gpt-4.5', 'gpt-4o', 'chatgpt-4o'].some(
    (p) => model.startsWith(p) && (model.length === p.length || model[p.length] === '-'),
  );
  return old ? 'system' : 'developer';
}

/** The chat settings of an index, or null when it is gone. */
function chatOf(deps: Deps, uid: string): { chat: ChatSettings; settings: Json } | null {
  if (!deps.registry.has(uid)) return null;
  const settings = deps.registry.handle(uid).settings();
  return { chat: settings.chat as ChatSettings, settings };
}

/** A value as Meilisearch prints a facet value (strings as they are). */
function facetText(v: string): string {
  return v;
}

/** `name: v1, v2.` lines of an index's facets, the most frequent values first. */
async function facetLines(search: SearchService, auth: AuthContext, uid: string, settings: Json): Promise<string> {
  const filterable = (settings.filterableAttributes as unknown[]) ?? [];
  if (filterable.length === 0) return '';
  let answer: Json;
  try {
    answer = JSON.parse((await search.search(auth, uid, { q: null, limit: 0, facets: ['*'] })).toString()) as Json;
  } catch {
    return '';
  }
  const dist = (answer.facetDistribution ?? {}) as Record<string, Record<string, number>>;
  let out = '';
  for (const name of Object.keys(dist).sort()) {
    const values = Object.entries(dist[name])
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? 1 : a[0] > b[0] ? -1 : 0))
      .slice(0, FACET_VALUES)
      .map(([v]) => facetText(v));
    out += `${name}: ${values.join(', ')}${values.length ? '.' : ''}\n`;
  }
  return out;
}

/** The `_meiliSearchInIndex` tool over the indexes `auth` may reach. */
async function searchTool(
  deps: Deps,
  search: SearchService,
  auth: AuthContext,
  prompts: ChatWorkspaceSettings['prompts'],
): Promise<Json> {
  let description = prompts.searchDescription;
  let filterDescription = prompts.searchFilterParam;
  const uids: string[] = [];
  for (const entry of deps.registry.list()) {
    if (!auth.canSeeIndex(entry.uid)) continue;
    const found = chatOf(deps, entry.uid);
    if (!found) continue;
    uids.push(entry.uid);
    description += `\n\n - ${entry.uid}: ${found.chat.description}\n\n`;
    filterDescription += `\n## Facet distributions of the ${entry.uid} index\n${await facetLines(search, auth, entry.uid, found.settings)}\n`;
  }
  return {
    type: 'function',
    function: {
      name: SEARCH_IN_INDEX,
      description,
      parameters: {
        type: 'object',
        properties: {
          index_uid: { type: 'string', enum: uids, description: prompts.searchIndexUidParam },
          q: { type: 'string', description: prompts.searchQParam },
          filter: { type: 'string', description: filterDescription },
        },
        required: ['index_uid', 'q', 'filter'],
        additionalProperties: false,
      },
      strict: true,
    },
  };
}

/** A stream chunk in the shape Meilisearch forwards (every field present, null when absent). */
function normalizeChunk(c: Json): Json {
  const choices = (c.choices as Json[]).map((ch) => {
    const d = (ch.delta ?? {}) as Json;
    return {
      index: ch.index ?? 0,
      delta: {
        content: d.content ?? null,
        function_call: d.function_call ?? null,
        tool_calls: d.tool_calls ?? null,
        role: d.role ?? null,
        refusal: d.refusal ?? null,
      },
      finish_reason: ch.finish_reason ?? null,
      logprobs: ch.logprobs ?? null,
    };
  });
  return {
    id: c.id,
    choices,
    created: c.created,
    model: c.model,
    service_tier: c.service_tier ?? null,
    system_fingerprint: c.system_fingerprint ?? null,
    object: c.object,
    usage: c.usage ?? null,
  };
}

/** A chunk built on `template` whose only choice is one call of a reporting tool. */
function toolChunk(template: Json, name: string, args: unknown): Json {
  const base = normalizeChunk(template);
  const choice = {
    index: 0,
    delta: {
      content: null,
      function_call: null,
      tool_calls: [
        { index: 0, id: randomUUID(), type: 'function', function: { name, arguments: JSON.stringify(args) } },
      ],
      role: 'assistant',
      refusal: null,
    },
    finish_reason: null,
    logprobs: null,
  };
  return { ...base, choices: [choice, ...(base.choices as unknown[]).slice(1)] };
}

interface Call {
  internal: boolean;
  id: string;
  name: string;
  arguments: string;
}

/** What one search of the model gave: the hits as sources and the text for the model, or a failure. */
type SearchOutcome = { ok: true; sources: unknown[]; text: string } | { ok: false; text: string; error: ApiError };

function parseArguments(text: string): { index_uid: string; q: string | null; filter: string | null } | string {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    return (err as Error).message;
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    return 'invalid type: expected struct SearchInIndexParameters';
  const a = v as Json;
  if (a.index_uid === undefined) return `missing field \`index_uid\` at ${endOf(text)}`;
  if (typeof a.index_uid !== 'string') return 'invalid type: expected a string at `index_uid`';
  const opt = (x: unknown) => (typeof x === 'string' ? x : null);
  return { index_uid: a.index_uid, q: opt(a.q), filter: opt(a.filter) };
}

/** Whether a top-level field is searchable under `searchableAttributes`. */
function searchableIn(searchable: string[]): (field: string) => boolean {
  if (searchable.includes('*')) return () => true;
  return (f) => searchable.some((s) => s === f || s.startsWith(`${f}.`));
}

/** Cuts `text` to `max` bytes on a character boundary. */
function cutBytes(text: string, max: number): string {
  const bytes = Buffer.from(text);
  if (bytes.length <= max) return text;
  let end = max;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString();
}

/**
 * Whether a template is rendered with only the document's searchable fields. The binding's
 * renderer takes every field as searchable, so a template that asks `is_searchable` (the
 * default one does) and never reads `doc` is given only the searchable fields, which is exact.
 * One that reads both is rendered whole (docs/design/chats-conversational-search.md).
 */
function rendersSearchableOnly(template: string, searchable: string[]): boolean {
  return !searchable.includes('*') && template.includes('is_searchable') && !/\bdoc\b/.test(template);
}

async function runSearch(
  deps: Deps,
  search: SearchService,
  auth: AuthContext,
  args: { index_uid: string; q: string | null; filter: string | null },
): Promise<SearchOutcome> {
  const uid = args.index_uid;
  try {
    const found = chatOf(deps, uid);
    if (!found) throw new ApiError('index_not_found', `Index \`${uid}\` not found.`);
    auth.assertIndex(uid);
    if (!auth.can('search', uid)) throw new ApiError('invalid_api_key', 'The provided API key is invalid.');
    const { chat, settings } = found;
    const body: Json = { ...chat.searchParameters, q: args.q, filter: args.filter };
    let answer: Json;
    try {
      answer = JSON.parse((await search.search(auth, uid, body, undefined, false, true)).toString()) as Json;
    } catch (err) {
      // A query the index refuses (its filter, its sort) is the model's to fix: the text says why.
      if (err instanceof ApiError && err.code.startsWith('invalid_search_'))
        return { ok: true, sources: [], text: err.message };
      throw err;
    }
    deps.metrics.chat.searched();
    const hits = (answer.hits ?? []) as Json[];
    const handle = deps.registry.handle(uid);
    const primaryKey = handle.primaryKey();
    const isSearchable = searchableIn((settings.searchableAttributes as string[]) ?? ['*']);
    const narrowFields = rendersSearchableOnly(
      chat.documentTemplate,
      (settings.searchableAttributes as string[]) ?? ['*'],
    );
    const texts: string[] = [];
    for (const hit of hits) {
      // The template sees the stored document, not only its displayed attributes.
      const id = primaryKey === null ? undefined : hit[primaryKey];
      const stored = id === undefined ? null : await handle.getDocument(String(id), null);
      let doc = stored ? (JSON.parse(stored.toString()) as Json) : hit;
      if (narrowFields) doc = Object.fromEntries(Object.entries(doc).filter(([k]) => isSearchable(k)));
      let text: string;
      try {
        text = renderTemplate(chat.documentTemplate, JSON.stringify(doc)) ?? '';
      } catch (err) {
        throw new ApiError('invalid_chat_setting_document_template', err instanceof Error ? err.message : String(err));
      }
      texts.push(cutBytes(text, chat.documentTemplateMaxBytes));
    }
    return { ok: true, sources: hits, text: texts.join('\n') };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { ok: false, text: `the search tool call failed with ${err.message}`, error: err };
  }
}

/** The error event of a search that failed: `response_error`, its code the HTTP status, as Meilisearch sends it. */
function searchErrorEvent(err: ApiError): StreamErrorEvent {
  return errorEvent('response_error', String(statusOf(err.code)), err.message);
}

export interface Completion {
  deps: Deps;
  /** The workspace's uid (the metrics' label). */
  workspace: string;
  search: SearchService;
  auth: AuthContext;
  settings: ChatWorkspaceSettings;
  /** The checked request body. */
  body: Json;
}

/**
 * Prepares the provider request: throws the refusals Meilisearch answers before streaming
 * (the client's tools), then returns the function that runs the conversation over `send`.
 */
export async function prepareCompletion(c: Completion): Promise<(send: Send) => Promise<void>> {
  const tools = Array.isArray(c.body.tools) ? c.body.tools : [];
  const reporting = reportingTools(tools);
  const { tools: _t, messages: given, stream: _s, stream_options: _o, ...rest } = c.body;
  const messages = [
    { role: systemRole(c.settings, String(c.body.model)), content: c.settings.prompts.system },
    ...(given as unknown[]),
  ];
  // Meilisearch's key order (its OpenAI request type's): the messages first, the tools last.
  const request: Json = { messages, ...rest, stream: true };
  if (c.settings.source === 'openAi' || c.settings.source === 'azureOpenAi')
    request.stream_options = { include_usage: true };
  request.tools = [await searchTool(c.deps, c.search, c.auth, c.settings.prompts)];
  return (send) => converse(c, request, reporting, send);
}

async function converse(c: Completion, request: Json, reporting: Reporting, send: Send): Promise<void> {
  const messages = request.messages as unknown[];
  const calls = new Map<number, Call>();
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const { chunks, error } = await callProvider(c.settings, request);
    let finish: unknown = null;
    for (const raw of chunks) {
      const chunk = raw as Json;
      if (chunk.usage) c.deps.metrics.chat.used(c.workspace, String(c.body.model), chunk.usage);
      const choice = (chunk.choices as Json[])[0];
      if (!choice) break;
      finish = choice.finish_reason ?? null;
      const delta = (choice.delta ?? {}) as Json;
      const toolCalls = delta.tool_calls;
      if (Array.isArray(toolCalls)) {
        for (const t of toolCalls as Json[]) {
          const index = Number(t.index ?? 0);
          const fn = (t.function ?? {}) as Json;
          const known = calls.get(index);
          if (known) {
            if (known.internal) known.arguments += typeof fn.arguments === 'string' ? fn.arguments : '';
          } else {
            const internal = fn.name === SEARCH_IN_INDEX;
            calls.set(index, {
              internal,
              id: String(t.id ?? ''),
              name: String(fn.name ?? ''),
              arguments: typeof fn.arguments === 'string' ? fn.arguments : '',
            });
          }
        }
      } else if (calls.size > 0) {
        const meili = [...calls.entries()]
          .sort((a, b) => a[0] - b[0])
          .map(([, call]) => call)
          .filter((call) => call.internal);
        calls.clear();
        messages.push({
          role: 'assistant',
          tool_calls: meili.map((m) => ({
            id: m.id,
            type: 'function',
            function: { name: m.name, arguments: m.arguments },
          })),
        });
        if (!(await answerCalls(c, meili, chunk, reporting, messages, send))) return;
      } else if (!(await send(normalizeChunk(chunk)))) {
        return;
      }
    }
    if (error) {
      if (!(await send(error))) return;
      break;
    }
    if (finish !== 'tool_calls') break;
  }
  await send('[DONE]');
}

/** Runs the model's searches, reporting as the client asked; false once the client is gone. */
async function answerCalls(
  c: Completion,
  meili: Call[],
  template: Json,
  reporting: Reporting,
  messages: unknown[],
  send: Send,
): Promise<boolean> {
  for (const call of meili) {
    if (
      reporting.progress &&
      !(await send(
        toolChunk(template, SEARCH_PROGRESS, {
          call_id: call.id,
          function_name: call.name,
          function_arguments: call.arguments,
        }),
      ))
    )
      return false;
    if (reporting.append) {
      const message = {
        role: 'assistant',
        tool_calls: [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }],
      };
      if (!(await send(toolChunk(template, APPEND_MESSAGE, message)))) return false;
    }
    const args = parseArguments(call.arguments);
    const outcome: SearchOutcome =
      typeof args === 'string'
        ? { ok: true, sources: [], text: args }
        : await runSearch(c.deps, c.search, c.auth, args);
    if (outcome.ok && typeof args !== 'string' && reporting.sources) {
      if (!(await send(toolChunk(template, SEARCH_SOURCES, { call_id: call.id, sources: outcome.sources }))))
        return false;
    }
    const tool = { role: 'tool', content: outcome.text, tool_call_id: call.id };
    if (reporting.append && !(await send(toolChunk(template, APPEND_MESSAGE, tool)))) return false;
    messages.push(tool);
    if (!outcome.ok && !(await send(searchErrorEvent(outcome.error)))) return false;
  }
  return true;
}
