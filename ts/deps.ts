/** What the routes are given: the process-wide services, built once by `openRuntime` (runtime.ts). */
import type { Guard } from './auth/guard';
import type { KeyStore } from './auth/keys';
import type { Config } from './config';
import type { FeatureStore } from './features';
import type { IndexRegistry } from './indexes/registry';
import type { Logger } from './logging';
import type { KvStore } from './native';
import type { Metrics } from './metrics/metrics';
import type { NetworkStore } from './network/state';
import type { ResponseBudget } from './http/response-budget';
import type { SearchLimiter } from './search/limiter';
import type { SearchRules } from './search/rules';
import type { TaskQueue } from './tasks/queue';
import type { WebhookStore } from './webhooks/store';
import type { ChatStore } from './chats/settings';
import type { Analytics } from './telemetry/analytics';
import type { TaskDbCompaction } from './tasks/compaction';
import type { Replica } from './replication/replica';

export interface Deps {
  config: Config;
  logger: Logger;
  queue: TaskQueue;
  registry: IndexRegistry;
  keys: KeyStore;
  features: FeatureStore;
  /** The network of instances this one belongs to (`/network`). */
  network: NetworkStore;
  guard: Guard;
  /** Bounds concurrent searches (503 `too_many_search_requests` when saturated). */
  searchLimiter: SearchLimiter;
  /** Bounds the bytes of answers being sent (503 `too_many_search_requests` past it). */
  responseBudget: ResponseBudget;
  /** Directory of staged document payloads (`<db>/update_files`). */
  updateFiles: string;
  dbPath: string;
  /** Dynamic search rules (`/dynamic-search-rules`), read by every search. */
  searchRules: SearchRules;
  /** Where finished batches are announced (`/webhooks`). */
  webhooks: WebhookStore;
  /** Chat workspaces and their settings (`/chats`). */
  chats: ChatStore;
  /** The task store (sizes for `/stats`). */
  kv: KvStore;
  /** What `GET /metrics` shows; request metrics are recorded while the `metrics` feature is on. */
  metrics: Metrics;
  /** Usage telemetry; null with `--no-analytics`. */
  analytics: Analytics | null;
  /** Compaction of the task database (`POST /tasks/compact`), and whether `/health` asks for a restart. */
  compaction: TaskDbCompaction;
  /** This instance's place in a replicated group (`--replication-nats`), else null. */
  replica: Replica | null;
}
