/**
 * Delivering finished batches to the webhooks: after a batch is committed, every webhook gets
 * one POST of its tasks as NDJSON (each line the task as `GET /tasks/{uid}` shows it),
 * gzip-compressed, with the webhook's headers, through the one outbound client (so its
 * allowlist applies: a refused destination is logged, never reached). A failure or a 5xx is
 * retried with growing pauses; deliveries run on their own, so a slow or dead receiver never
 * holds the task queue or the other webhooks. At most `MAX_PENDING` deliveries wait per
 * webhook; past that the oldest are dropped with a warning rather than growing memory.
 */
import zlib from 'node:zlib';
import type { Logger } from '../logging';
import { outboundRequest } from '../native';
import { taskView } from '../tasks/queue';
import type { TaskRecord } from '../tasks/types';
import type { Webhook, WebhookStore } from './store';

const TIMEOUT_MS = 30_000;
const MAX_PENDING = 1000;
/**
 * Deliveries out at once, across webhooks: each holds a thread of the libuv pool (16) that
 * searches and indexing share, so receivers that never answer cannot starve them.
 */
const MAX_IN_FLIGHT = 4;

export interface DeliveryOptions {
  /** Pauses before each retry; their count is the number of retries. */
  retryDelaysMs: number[];
}

interface Delivery {
  hook: Webhook;
  body: Buffer;
  batchUid: number | null;
}

export class WebhookDispatcher {
  /** Deliveries waiting, per webhook uuid, in batch order. */
  readonly #pending = new Map<string, Delivery[]>();
  /** Webhooks with a delivery under way: one at a time each, so a receiver sees batches in order. */
  readonly #busy = new Set<string>();
  #idle: Array<() => void> = [];

  constructor(
    private readonly store: WebhookStore,
    private readonly logger: Logger,
    private readonly options: DeliveryOptions = { retryDelaysMs: [1_000, 5_000, 30_000] },
  ) {}

  /** Announces a finished batch to every webhook; returns at once. */
  batchFinished(tasks: TaskRecord[]): void {
    const hooks = this.store.all();
    if (hooks.length === 0 || tasks.length === 0) return;
    const body = zlib.gzipSync(Buffer.from(tasks.map((t) => `${JSON.stringify(taskView(t))}\n`).join('')));
    for (const hook of hooks) {
      const queue = this.#pending.get(hook.uuid) ?? [];
      queue.push({ hook, body, batchUid: tasks[0].batchUid });
      if (queue.length > MAX_PENDING) {
        const dropped = queue.shift()!;
        this.logger.warn('webhook delivery dropped: too many waiting', {
          url: dropped.hook.url,
          batchUid: dropped.batchUid,
        });
      }
      this.#pending.set(hook.uuid, queue);
      this.#pump(hook.uuid);
    }
  }

  /** Resolves once nothing is waiting or being delivered (tests, shutdown). */
  idle(): Promise<void> {
    if (this.#busy.size === 0 && this.#pending.size === 0) return Promise.resolve();
    return new Promise((r) => this.#idle.push(r));
  }

  #pump(uuid: string): void {
    if (this.#busy.has(uuid)) return;
    if (this.#busy.size >= MAX_IN_FLIGHT) return; // picked up when one ends
    const next = this.#pending.get(uuid)?.shift();
    if (!next) {
      this.#pending.delete(uuid);
      if (this.#busy.size === 0 && this.#pending.size === 0) for (const r of this.#idle.splice(0)) r();
      return;
    }
    this.#busy.add(uuid);
    void this.#deliver(next).finally(() => {
      this.#busy.delete(uuid);
      // This webhook's next batch, then any other webhook left waiting for a slot.
      this.#pump(uuid);
      for (const other of [...this.#pending.keys()]) this.#pump(other);
    });
  }
  async #deliver(d: Delivery): Promise<void> {
    // The body is always gzip NDJSON: a webhook's own content headers give way.
    const own = Object.entries(d.hook.headers).filter(([k]) => !/^content-(type|encoding)$/i.test(k));
    const headers = { ...Object.fromEntries(own), 'Content-Type': 'application/x-ndjson', 'Content-Encoding': 'gzip' };
    for (let attempt = 0; ; attempt++) {
      const a = await outboundRequest('POST', d.hook.url, headers, d.body, TIMEOUT_MS);
      if (a.failure === 'refused') {
        this.logger.warn('webhook not delivered: its address is outside the allowed networks', {
          url: d.hook.url,
          batchUid: d.batchUid,
          reason: a.message,
        });
        return;
      }
      if (a.failure === null && a.status < 500) {
        if (a.status >= 400)
          this.logger.warn('webhook refused the delivery', { url: d.hook.url, batchUid: d.batchUid, status: a.status });
        return;
      }
      const delay = this.options.retryDelaysMs[attempt];
      if (delay === undefined) {
        this.logger.warn('webhook delivery failed', {
          url: d.hook.url,
          batchUid: d.batchUid,
          status: a.status,
          reason: a.failure ?? undefined,
        });
        return;
      }
      await new Promise((r) => setTimeout(r, delay).unref());
    }
  }
}
