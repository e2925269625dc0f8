/**
 * Anonymous usage telemetry (SPEC "Usage telemetry"): collected in memory, sent in batches
 * every `--experimental-analytics-interval-ms` (one hour by default) or as soon as the
 * pending events reach 500 KB, whichever comes first, to `--experimental-analytics-url`.
 *
 * What it owns: three kinds of data, none of which names a user, an index or a value.
 * - Counters of the search hot path (received, succeeded, failed, latency sum and a
 *   power-of-two histogram for the 99th percentile): `recordSearch` is a few increments.
 * - Feature-usage events of the write routes (settings updated, index created, documents
 *   added...), kept one per request as properties made only of setting names, booleans,
 *   counts and a closed list of content types (see `middleware.ts`).
 * - At each batch, the instance's system and configuration: OS, kernel, cores, RAM, disk,
 *   database size, number of indexes, and the start-up options as booleans or numbers
 *   (never a path, an address, a key or a URL).
 *
 * What it does not do: with no URL configured nothing is sent and only the counters are kept;
 * with `--no-analytics` this class is not built at all (no collection, no instance UID).
 * Search feature usage (which search parameters are used) is not collected: knowing it
 * would mean re-reading every search body on the hot path.
 *
 * The batch is JSON (`Content-Type: application/json`):
 * `{ instanceUid, sentAt, context: {app: {name, version}}, identify: {system, infos, stats, start_since_days}, batch: [{event, timestamp, properties}] }`.
 * A batch that cannot be delivered is dropped (logged), so memory never grows with an
 * unreachable collector. Delivery goes through the one outbound client, so the
 * `--experimental-allowed-ip-networks` allowlist applies.
 */
import type { Logger } from '../logging';

export interface TelemetryEvent {
  event: string;
  timestamp: string;
  properties: Record<string, unknown>;
}

export interface AnalyticsOptions {
  instanceUid: string;
  /** Where batches go; null: counters only, nothing sent. */
  url: string | null;
  intervalMs: number;
  /** Pending event bytes that trigger a batch at once (500 KB). */
  maxBatchBytes?: number;
  /** Sends one batch (the one outbound client in production). */
  send: (url: string, body: Buffer) => Promise<void>;
  /** The instance's system, configuration and stats, read at each batch. */
  identify: () => Record<string, unknown>;
  logger: Logger;
  version: string;
}

/** Upper bounds (ms) of the latency histogram's buckets: bucket i holds latencies below 2^i ms. */
const BUCKETS = 24;

export class Analytics {
  readonly instanceUid: string;
  /** Whether feature-usage events are collected (a URL is configured). */
  readonly collectsEvents: boolean;

  searchesReceived = 0;
  searchesSucceeded = 0;
  searchesFailed = 0;
  private latencySumMs = 0;
  private readonly latency = new Uint32Array(BUCKETS);

  private events: TelemetryEvent[] = [];
  private pendingBytes = 0;
  private launched = false;
  private timer: NodeJS.Timeout | null = null;
  private sending: Promise<void> = Promise.resolve();
  private readonly maxBatchBytes: number;

  constructor(private readonly opts: AnalyticsOptions) {
    this.instanceUid = opts.instanceUid;
    this.collectsEvents = opts.url !== null;
    this.maxBatchBytes = opts.maxBatchBytes ?? 500_000;
  }

  /** The search hot path: a handful of increments. */
  recordSearch(ok: boolean, ms: number): void {
    this.searchesReceived++;
    if (ok) this.searchesSucceeded++;
    else this.searchesFailed++;
    this.latencySumMs += ms;
    this.latency[Math.min(BUCKETS - 1, 32 - Math.clz32(ms))]++;
  }

  /** One feature-usage event; a no-op when nothing would be sent. */
  event(name: string, properties: Record<string, unknown>): void {
    if (!this.collectsEvents) return;
    const e: TelemetryEvent = { event: name, timestamp: new Date().toISOString(), properties };
    this.events.push(e);
    this.pendingBytes += JSON.stringify(e).length;
    if (this.pendingBytes >= this.maxBatchBytes) void this.flush();
  }

  /** Starts the periodic batches (when a URL is configured). */
  start(): void {
    if (!this.collectsEvents || this.timer) return;
    this.timer = setInterval(() => void this.flush(), this.opts.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** The batch that would be sent now, and the reset of what it reports. Null when there is nothing new. */
  takeBatch(): Record<string, unknown> | null {
    const batch: TelemetryEvent[] = [];
    const now = new Date().toISOString();
    if (!this.launched) {
      this.launched = true;
      batch.push({ event: 'Launched', timestamp: now, properties: {} });
    }
    if (this.searchesReceived > 0)
      batch.push({ event: 'Searches Aggregated', timestamp: now, properties: { requests: this.takeSearchCounters() } });
    batch.push(...this.events);
    this.events = [];
    this.pendingBytes = 0;
    if (batch.length === 0) return null;
    return {
      instanceUid: this.instanceUid,
      sentAt: now,
      context: { app: { name: 'quarry', version: this.opts.version } },
      identify: this.opts.identify(),
      batch,
    };
  }

  private takeSearchCounters(): Record<string, number> {
    const total = this.searchesReceived;
    let p99 = 0;
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.latency[i];
      if (seen >= Math.ceil(total * 0.99)) {
        p99 = 2 ** i;
        break;
      }
    }
    const out = {
      total_received: total,
      total_succeeded: this.searchesSucceeded,
      total_failed: this.searchesFailed,
      avg_response_time_ms: Math.round((this.latencySumMs / total) * 1000) / 1000,
      '99th_response_time_ms_at_most': p99,
    };
    this.searchesReceived = this.searchesSucceeded = this.searchesFailed = 0;
    this.latencySumMs = 0;
    this.latency.fill(0);
    return out;
  }

  /** Settles when the batches started so far are sent (or dropped). */
  flushed(): Promise<void> {
    return this.sending;
  }

  /** Sends what is pending now (one batch at a time). */
  flush(): Promise<void> {
    this.sending = this.sending.then(async () => {
      if (!this.opts.url) return;
      const batch = this.takeBatch();
      if (!batch) return;
      try {
        await this.opts.send(this.opts.url, Buffer.from(JSON.stringify(batch)));
      } catch (err) {
        this.opts.logger.warn('telemetry batch not delivered; dropped', { error: (err as Error).message });
      }
    });
    return this.sending;
  }
}
