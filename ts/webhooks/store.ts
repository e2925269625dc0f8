/**
 * Webhooks (`/webhooks`): where finished batches are announced. Each is `{uuid, url,
 * headers}`, stored in the `webhooks` database; the one `--task-webhook-url` configures has the
 * nil uuid, is not stored and cannot be changed through the API (`isEditable: false`).
 * Validation and messages are Meilisearch 1.50's; views hide `Authorization` values as it does.
 */
import { randomUUID } from 'node:crypto';
import { ApiError } from '../errors/api-error';
import { hideSecret } from '../native';
import { describeValue, incorrectType, isObject } from '../settings/deserr';
import { jsonValue, type Records } from '../store/durable';

export const CLI_WEBHOOK_UUID = '00000000-0000-0000-0000-000000000000';
const DB = 'webhooks';
const MAX_WEBHOOKS = 20;
const MAX_HEADERS = 200;
const FIELDS = ['url', 'headers'];

export interface Webhook {
  uuid: string;
  url: string;
  headers: Record<string, string>;
}

/** A canonical (lowercase, hyphenated) uuid, or Meilisearch's `invalid_webhook_uuid`. */
export function parseWebhookUuid(text: string): string {
  const fail = (why: string): never => {
    throw new ApiError('invalid_webhook_uuid', `Invalid UUID: ${why}`);
  };
  const bad = [...text].findIndex((c) => !/[0-9a-fA-F-]/.test(c));
  if (bad >= 0) fail(`invalid character: found \`${text[bad]}\` at ${bad}`);
  if (!text.includes('-')) {
    if (text.length !== 32) fail(`invalid length: found ${text.length}`);
    return `${text.slice(0, 8)}-${text.slice(8, 12)}-${text.slice(12, 16)}-${text.slice(16, 20)}-${text.slice(20)}`.toLowerCase();
  }
  const groups = text.split('-');
  if (groups.length !== 5) fail(`invalid group count: expected 5, found ${groups.length}`);
  const lengths = [8, 4, 4, 4, 12];
  groups.forEach((g, i) => {
    if (g.length !== lengths[i]) fail(`invalid group length in group ${i}: expected ${lengths[i]}, found ${g.length}`);
  });
  return text.toLowerCase();
}

/** The view of a webhook: `Authorization` values hidden (a `Bearer ` prefix kept). */
export function webhookView(w: Webhook): Record<string, unknown> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(w.headers)) {
    if (name.toLowerCase() !== 'authorization') headers[name] = value;
    else headers[name] = value.startsWith('Bearer ') ? `Bearer ${hideSecret(value.slice(7))}` : hideSecret(value);
  }
  return { uuid: w.uuid, isEditable: w.uuid !== CLI_WEBHOOK_UUID, url: w.url, headers };
}

export class WebhookStore {
  readonly #hooks = new Map<string, Webhook>();
  readonly #cli: Webhook | null;

  constructor(
    private readonly records: Records,
    cli: { url: string; authorization: string | null } | null,
  ) {
    this.#cli = cli
      ? { uuid: CLI_WEBHOOK_UUID, url: cli.url, headers: cli.authorization ? { Authorization: cli.authorization } : {} }
      : null;
    for (const { value } of records.kv.scan(DB)) {
      const w = JSON.parse(value.toString()) as Webhook;
      this.#hooks.set(w.uuid, w);
    }
    records.watch(DB, (op) => {
      if (!op.value) this.#hooks.delete(op.key);
      else this.#hooks.set(op.key, JSON.parse(op.value.toString()) as Webhook);
    });
  }

  /** Every webhook, the command line's first. */
  all(): Webhook[] {
    return [...(this.#cli ? [this.#cli] : []), ...this.#hooks.values()];
  }

  /** The API's webhooks only (what a dump carries). */
  stored(): Webhook[] {
    return [...this.#hooks.values()];
  }

  get(uuid: string): Webhook {
    const w = uuid === CLI_WEBHOOK_UUID ? this.#cli : this.#hooks.get(uuid);
    if (!w) throw new ApiError('webhook_not_found', `Webhook \`${uuid}\` not found.`);
    return w;
  }

  async create(body: unknown): Promise<Webhook> {
    const uuid = randomUUID();
    const change = parseChange(body);
    if (this.#hooks.size >= MAX_WEBHOOKS) {
      throw new ApiError(
        'invalid_webhooks',
        `Defining too many webhooks would crush the server. Please limit the number of webhooks to ${MAX_WEBHOOKS}. You may use a third-party proxy server to dispatch events to more than ${MAX_WEBHOOKS} endpoints.`,
      );
    }
    if (change.url === undefined || change.url === null) throw missingUrl(uuid);
    // A header given `null` on creation is kept empty, as Meilisearch keeps it.
    const headers = Object.fromEntries(Object.entries(change.headers ?? {}).map(([k, v]) => [k, v ?? '']));
    return this.save({ uuid, url: change.url, headers });
  }

  async update(uuid: string, body: unknown): Promise<Webhook> {
    this.refuseCli(uuid);
    const current = this.get(uuid);
    const change = parseChange(body);
    if (change.url === null) throw missingUrl(uuid);
    const headers = { ...current.headers };
    for (const [k, v] of Object.entries(change.headers ?? {})) {
      if (v === null) delete headers[k];
      else headers[k] = v;
    }
    return this.save({ uuid, url: change.url ?? current.url, headers });
  }

  async delete(uuid: string): Promise<void> {
    this.refuseCli(uuid);
    this.get(uuid);
    await this.records.commit([{ db: DB, key: uuid, value: null }]);
  }

  /** Replaces the API's webhooks (a dump's). */
  async replaceAll(hooks: Webhook[]): Promise<void> {
    const keep = new Set(hooks.map((w) => w.uuid));
    const gone = [...this.#hooks.keys()].filter((k) => !keep.has(k));
    await this.records.commit([
      ...gone.map((k) => ({ db: DB, key: k, value: null })),
      ...hooks.map((w) => ({ db: DB, key: w.uuid, value: jsonValue(w) })),
    ]);
  }

  private refuseCli(uuid: string): void {
    if (uuid === CLI_WEBHOOK_UUID) {
      throw new ApiError(
        'immutable_webhook',
        `Webhook \`${uuid}\` is immutable. The webhook defined from the command line cannot be modified using the API.`,
      );
    }
  }

  private async save(w: Webhook): Promise<Webhook> {
    if (Object.keys(w.headers).length > MAX_HEADERS) {
      throw new ApiError(
        'invalid_webhook_headers',
        `Too many headers for the webhook \`${w.uuid}\`. Please limit the number of headers to ${MAX_HEADERS}. Hint: To remove an already defined header set its value to \`null\``,
      );
    }
    await this.records.commit([{ db: DB, key: w.uuid, value: jsonValue(w) }]);
    return w;
  }
}

function missingUrl(uuid: string): ApiError {
  return new ApiError('invalid_webhook_url', `The URL for the webhook \`${uuid}\` is missing.`);
}

/** A create or update body: `url` (null: missing) and `headers` (a null value: remove). */
function parseChange(body: unknown): { url?: string | null; headers?: Record<string, string | null> } {
  if (!isObject(body)) throw new ApiError('bad_request', incorrectType(body, ['object'], []).message);
  for (const k of Object.keys(body)) {
    if (k === 'uuid')
      throw new ApiError('immutable_webhook_uuid', 'Immutable field `uuid`: expected one of `url`, `headers`');
    if (k === 'isEditable')
      throw new ApiError(
        'immutable_webhook_is_editable',
        'Immutable field `isEditable`: expected one of `url`, `headers`',
      );
    if (!FIELDS.includes(k))
      throw new ApiError('bad_request', `Unknown field \`${k}\`: expected one of \`url\`, \`headers\``);
  }
  const out: { url?: string | null; headers?: Record<string, string | null> } = {};
  if (body.url !== undefined && body.url !== null) {
    if (typeof body.url !== 'string')
      throw new ApiError('invalid_webhook_url', incorrectType(body.url, ['string'], ['url']).message);
    try {
      new URL(body.url);
    } catch {
      throw new ApiError('invalid_webhook_url', `Invalid URL \`${body.url}\`: relative URL without a base`);
    }
    out.url = body.url;
  } else if (body.url === null) {
    out.url = null;
  }
  if (body.headers !== undefined && body.headers !== null) {
    if (!isObject(body.headers))
      throw new ApiError('invalid_webhook_headers', incorrectType(body.headers, ['object'], ['headers']).message);
    const headers: Record<string, string | null> = {};
    for (const [k, v] of Object.entries(body.headers)) {
      if (v !== null && typeof v !== 'string') {
        throw new ApiError(
          'invalid_webhook_headers',
          `Invalid value type at \`.headers.${k}\`: expected a string, but found ${describeValue(v)}`,
        );
      }
      headers[k] = v;
    }
    out.headers = headers;
  }
  return out;
}
