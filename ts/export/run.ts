/**
 * An `export` task: the indexes its patterns match are sent to another instance, as
 * Meilisearch 1.50 sends them. For each index (in uid order): its filter is checked first
 * (nothing is sent for a bad one); `GET {url}/indexes/{uid}` asks whether the target has it;
 * a missing index is created (`POST /indexes` with the primary key) and given every setting
 * (`PATCH /indexes/{uid}/settings`); an existing one keeps its own unless `overrideSettings`
 * (then `PATCH /indexes/{uid}` sets the primary key and the settings are sent). The documents
 * (with their `_vectors`) follow as gzip-compressed NDJSON, `POST /indexes/{uid}/documents`,
 * in requests of at most `payloadSize` bytes before compression (a larger document goes
 * alone). The target's tasks are not waited for.
 *
 * Every request goes through the outbound client (allowed networks apply). A network failure,
 * a time-out or a 5xx is tried again with Meilisearch's back-off (0.5 s, ×1.5 with jitter, at
 * most 60 s apart, for 15 minutes, then the task fails with the transport's message); a target
 * outside the allowed networks fails at once (Meilisearch tries it for 15 minutes too), and any
 * other answer fails the task with the target's error in Meilisearch's words.
 */
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { ApiError } from '../errors/api-error';
import type { FeatureStore } from '../features';
import type { IndexRegistry } from '../indexes/registry';
import type { Logger } from '../logging';
import { type NativeIndex, outboundRequest, type OutboundAnswer } from '../native';
import { patternMatches } from '../auth/actions';
import { arrayItems } from '../util/json-array';
import { DEFAULT_PAYLOAD_SIZE, type ExportIndexOptions } from '../schemas/export';
import type { TaskPayload, TaskRecord } from '../tasks/types';

const gzip = promisify(zlib.gzip);

/** Documents read from the index per engine call. */
const PAGE = 1000;
/** Each request's own bound. */
const REQUEST_TIMEOUT_MS = 120_000;

/** Meilisearch's back-off (the `backoff` crate's defaults). */
export interface Backoff {
  initialMs: number;
  multiplier: number;
  maxIntervalMs: number;
  maxElapsedMs: number;
  randomization: number;
}
export const DEFAULT_BACKOFF: Backoff = {
  initialMs: 500,
  multiplier: 1.5,
  maxIntervalMs: 60_000,
  maxElapsedMs: 15 * 60_000,
  randomization: 0.5,
};

export type ExportPayload = Extract<TaskPayload, { kind: 'export' }>;

export interface ExportDeps {
  registry: IndexRegistry;
  features: FeatureStore;
  logger: Logger;
  backoff?: Backoff;
}

/** Runs one export; resolves with the task's details, or throws the `ApiError` it fails with. */
export class Exporter {
  constructor(private readonly deps: ExportDeps) {}

  async run(task: TaskRecord, trace: Record<string, string>): Promise<Record<string, unknown>> {
    const p = task.payload as ExportPayload;
    const target = new Target(p.url, p.apiKey, this.deps.backoff ?? DEFAULT_BACKOFF);
    const limit = p.payloadSize ?? DEFAULT_PAYLOAD_SIZE;
    const patterns = Object.keys(p.indexes);
    const exported: Record<string, unknown> = {};
    for (const entry of this.deps.registry.list()) {
      const pattern = patterns.find((pat) => patternMatches(pat, entry.uid));
      if (pattern === undefined) continue;
      const options = p.indexes[pattern];
      const t0 = performance.now();
      const index = this.deps.registry.handleOf(entry);
      const matched = await this.exportIndex(entry.uid, index, options, target, limit);
      trace[`processing tasks > Exporting index \`${entry.uid}\``] = `${(performance.now() - t0).toFixed(2)}ms`;
      exported[entry.uid] = {
        filter: options.filter,
        overrideSettings: options.overrideSettings,
        matched_documents: matched,
      };
    }
    return { indexes: exported };
  }

  private async exportIndex(
    uid: string,
    index: NativeIndex,
    options: ExportIndexOptions,
    target: Target,
    limit: number,
  ): Promise<number> {
    const filter = options.filter ?? null;
    const containsFilter = !!this.deps.features.get().containsFilter;
    const page = async (offset: number) => {
      try {
        return splitResults(
          await index.fetchDocuments({ offset, limit: PAGE, filter, retrieveVectors: true, containsFilter }),
        );
      } catch (err) {
        // A bad filter fails the task before anything is sent, naming the index.
        if (err instanceof ApiError) throw new ApiError(err.code, `Index \`${uid}\`: ${err.message}`);
        throw err;
      }
    };
    let current = await page(0);
    const settings = this.settingsOf(index);
    refuseHiddenSecrets(uid, settings);

    const path = `/indexes/${uid}`;
    const exists = await target.exists(path);
    const primaryKey = index.primaryKey();
    if (!exists) await target.send('POST', '/indexes', { uid, primaryKey });
    else if (options.overrideSettings) await target.send('PATCH', path, { primaryKey });
    if (!exists || options.overrideSettings) await target.send('PATCH', `${path}/settings`, settings);

    let matched = 0;
    let lines: Buffer[] = [];
    let size = 0;
    const flush = async () => {
      if (lines.length === 0) return;
      const ndjson = Buffer.concat(lines.flatMap((l, i) => (i === 0 ? [l] : [NEWLINE, l])));
      lines = [];
      size = 0;
      await target.sendDocuments(`${path}/documents`, await gzip(ndjson));
    };
    for (let offset = 0; ; ) {
      for (const doc of current.docs) {
        if (lines.length > 0 && size + 1 + doc.length > limit) await flush();
        size += (lines.length > 0 ? 1 : 0) + doc.length;
        lines.push(doc);
      }
      matched += current.docs.length;
      offset += current.docs.length;
      if (current.docs.length < PAGE || offset >= current.total) break;
      current = await page(offset);
    }
    await flush();
    return matched;
  }

  /** Every setting, as `GET /settings` shows it (the experimental ones only while their feature is on). */
  private settingsOf(index: NativeIndex): Record<string, unknown> {
    const out = index.settings();
    const flags = this.deps.features.get() as unknown as Record<string, boolean>;
    if (!flags.foreignKeys) delete out.foreignKeys;
    if (!flags.chatCompletions) delete out.chat;
    return out;
  }
}

const NEWLINE = Buffer.from('\n');

/**
 * The engine shows an embedder's API key masked (`sk-XXXX...`), and sending that would leave
 * the target an embedder with a wrong key: such an index is refused before anything is sent.
 * (Meilisearch sends the key in clear; the binding has no call that reveals it yet.)
 */
function refuseHiddenSecrets(uid: string, settings: Record<string, unknown>): void {
  const embedders = (settings.embedders ?? {}) as Record<string, Record<string, unknown>>;
  const keyed = (e: unknown) =>
    !!e && typeof e === 'object' && typeof (e as Record<string, unknown>).apiKey === 'string';
  for (const [name, e] of Object.entries(embedders)) {
    if (keyed(e) || keyed(e?.searchEmbedder) || keyed(e?.indexingEmbedder)) {
      throw new ApiError(
        'internal',
        `Index \`${uid}\`: the embedder \`${name}\` has an API key, which Quarry cannot export yet: its settings show the key masked.`,
      );
    }
  }
}

/** The documents of a `fetchDocuments` answer as they are (each one's bytes), and its `total`. */
export function splitResults(bytes: Buffer): { docs: Buffer[]; total: number } {
  const found = arrayItems(bytes, 'results');
  const total = Number(/"total":(\d+)/.exec(bytes.subarray(found.close).toString())?.[1] ?? found.items.length);
  return { docs: found.items, total };
}

/** The instance documents are sent to. */
class Target {
  private readonly base: string;

  constructor(
    url: string,
    private readonly apiKey: string | null,
    private readonly backoff: Backoff,
  ) {
    this.base = url.replace(/\/+$/, '');
  }

  private headers(more: Record<string, string>): Record<string, string> {
    return this.apiKey === null ? more : { ...more, Authorization: `Bearer ${this.apiKey}` };
  }

  /** Whether the target has the index: a 404 is no, a success yes, anything else fails the task. */
  async exists(path: string): Promise<boolean> {
    const a = await this.request('GET', path, {}, Buffer.alloc(0));
    if (a.status === 404) return false;
    if (a.status >= 200 && a.status < 300) return true;
    throw remoteError(a);
  }

  async send(method: string, path: string, body: unknown): Promise<void> {
    const a = await this.request(
      method,
      path,
      { 'Content-Type': 'application/json; charset=utf-8' },
      Buffer.from(JSON.stringify(body, null, 2)),
    );
    if (a.status < 200 || a.status >= 300) throw remoteError(a);
  }

  async sendDocuments(path: string, gzipped: Buffer): Promise<void> {
    const a = await this.request(
      'POST',
      path,
      { 'Content-Type': 'application/x-ndjson', 'Content-Encoding': 'gzip' },
      gzipped,
    );
    if (a.status < 200 || a.status >= 300) throw remoteError(a);
  }

  /** One request, tried again while it fails for the network or the target's 5xx. */
  private async request(
    method: string,
    path: string,
    headers: Record<string, string>,
    body: Buffer,
  ): Promise<OutboundAnswer> {
    const url = this.base + path;
    const started = Date.now();
    let interval = this.backoff.initialMs;
    for (;;) {
      const a = await outboundRequest(method, url, this.headers(headers), body, REQUEST_TIMEOUT_MS);
      // Meilisearch tries a rejected address again too; here the allowlist cannot change meanwhile.
      if (a.failure === 'refused')
        throw new ApiError('internal', a.message ?? 'the address is outside the allowed networks');
      const transient = a.failure !== null || a.status >= 500;
      if (!transient) return a;
      const wait = interval * (1 + this.backoff.randomization * (2 * Math.random() - 1));
      if (Date.now() - started + wait > this.backoff.maxElapsedMs) {
        // The transport's own words, as Meilisearch gives them ("Connection refused").
        if (a.failure !== null) throw new ApiError('internal', a.message ?? a.failure);
        return a;
      }
      await new Promise((r) => setTimeout(r, wait));
      interval = Math.min(interval * this.backoff.multiplier, this.backoff.maxIntervalMs);
    }
  }
}

/** The target's error answer as the task's: Meilisearch's `internal` error naming the remote one. */
function remoteError(a: OutboundAnswer): ApiError {
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(a.body.toString());
  } catch {
    parsed = null;
  }
  const e = parsed as { message?: unknown; code?: unknown; type?: unknown; link?: unknown } | null;
  if (
    e &&
    typeof e.message === 'string' &&
    typeof e.code === 'string' &&
    typeof e.type === 'string' &&
    typeof e.link === 'string'
  ) {
    return new ApiError(
      'internal',
      `Failed to export documents to remote server ${e.code} (${e.type}): ${e.message} <${e.link}>`,
    );
  }
  const text = a.body.toString().slice(0, 200);
  return new ApiError(
    'internal',
    `Failed to export documents to remote server: the answer (status ${a.status}) is not a Meilisearch error${text ? `: ${text}` : ''}`,
  );
}
