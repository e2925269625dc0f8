/**
 * The `--replication-*` options (see `replication/`): which NATS servers hold the replicated
 * log, the stream's name and copies, this instance's name, how often snapshots are published
 * and how long a write waits for the log. Without `--replication-nats` there is no replication.
 */
import { randomUUID } from 'node:crypto';
import type { ReplicationConfig } from '../replication/replica';

export class ReplicationOptionError extends Error {}

export interface ReplicationRaw {
  replicationNats?: string;
  replicationStream?: string;
  replicationReplicas?: string;
  replicationNode?: string;
  replicationSnapshotInterval?: string;
  replicationTimeout?: string;
  replicationLaggingGrace?: string;
}

export const REPLICATION_OPTIONS: Array<{
  name: keyof ReplicationRaw;
  flag: string;
  env: string;
  meili: string;
  help: string;
}> = [
  {
    name: 'replicationNats',
    flag: '--replication-nats',
    env: 'QUARRY_REPLICATION_NATS',
    meili: 'QUARRY_REPLICATION_NATS',
    help: 'NATS servers (nats://host:port, comma-separated) whose JetStream holds the replicated task log; unset: no replication',
  },
  {
    name: 'replicationStream',
    flag: '--replication-stream',
    env: 'QUARRY_REPLICATION_STREAM',
    meili: 'QUARRY_REPLICATION_STREAM',
    help: 'name of the log stream, created if absent (default quarry)',
  },
  {
    name: 'replicationReplicas',
    flag: '--replication-replicas',
    env: 'QUARRY_REPLICATION_REPLICAS',
    meili: 'QUARRY_REPLICATION_REPLICAS',
    help: 'copies of the log JetStream keeps when it creates the stream (default 3; 1 for a single NATS server)',
  },
  {
    name: 'replicationNode',
    flag: '--replication-node',
    env: 'QUARRY_REPLICATION_NODE',
    meili: 'QUARRY_REPLICATION_NODE',
    help: "this instance's name in the group (default its --http-addr)",
  },
  {
    name: 'replicationSnapshotInterval',
    flag: '--replication-snapshot-interval',
    env: 'QUARRY_REPLICATION_SNAPSHOT_INTERVAL',
    meili: 'QUARRY_REPLICATION_SNAPSHOT_INTERVAL',
    help: 'seconds between snapshots new instances start from; the log then drops what they cover (default 3600; 0: never)',
  },
  {
    name: 'replicationLaggingGrace',
    flag: '--replication-lagging-grace',
    env: 'QUARRY_REPLICATION_LAGGING_GRACE',
    meili: 'QUARRY_REPLICATION_LAGGING_GRACE',
    help: 'seconds the log keeps, past the snapshots, what an instance that stopped reporting has not read; it then starts from a snapshot when it returns (default 300)',
  },
  {
    name: 'replicationTimeout',
    flag: '--replication-timeout-ms',
    env: 'QUARRY_REPLICATION_TIMEOUT_MS',
    meili: 'QUARRY_REPLICATION_TIMEOUT_MS',
    help: 'milliseconds a write waits for the log before 503 replication_unavailable (default 5000)',
  },
];

export function replicationFrom(raw: ReplicationRaw, httpAddr: string): ReplicationConfig | null {
  if (raw.replicationNats === undefined || raw.replicationNats.trim() === '') {
    const stray = REPLICATION_OPTIONS.find((o) => o.name !== 'replicationNats' && raw[o.name] !== undefined);
    if (stray) throw new ReplicationOptionError(`${stray.flag} requires --replication-nats`);
    return null;
  }
  const servers = raw.replicationNats
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const s of servers) {
    let u: URL;
    try {
      u = new URL(s.includes('://') ? s : `nats://${s}`);
    } catch {
      throw new ReplicationOptionError(`--replication-nats: \`${s}\` is not a NATS server address (nats://host:port)`);
    }
    if (!['nats:', 'tls:'].includes(u.protocol) || u.hostname === '')
      throw new ReplicationOptionError(`--replication-nats: \`${s}\` is not a NATS server address (nats://host:port)`);
  }
  const stream = raw.replicationStream ?? 'quarry';
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(stream))
    throw new ReplicationOptionError(
      `--replication-stream: \`${stream}\` is not a stream name (letters, digits, \`-\` and \`_\`, at most 64)`,
    );
  const int = (flag: string, v: string | undefined, fallback: number, min: number, max: number): number => {
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new ReplicationOptionError(`${flag}: \`${v}\` is not an integer from ${min} to ${max}`);
    return n;
  };
  return {
    servers,
    stream,
    replicas: int('--replication-replicas', raw.replicationReplicas, 3, 1, 5),
    // A port chosen by the system (`:0`) names no one instance: a random suffix does.
    node: raw.replicationNode ?? (/:0$/.test(httpAddr) ? `${httpAddr}-${randomUUID().slice(0, 8)}` : httpAddr),
    snapshotIntervalSeconds: int(
      '--replication-snapshot-interval',
      raw.replicationSnapshotInterval,
      3600,
      0,
      365 * 86_400,
    ),
    timeoutMs: int('--replication-timeout-ms', raw.replicationTimeout, 5000, 100, 600_000),
    laggingGraceSeconds: int('--replication-lagging-grace', raw.replicationLaggingGrace, 300, 0, 30 * 86_400),
  };
}
