/**
 * Every start-up option of Meilisearch 1.50 and what Quarry does with it. An option is
 * either read by a row of `OPTIONS` (`ts/startup/options.ts`), or refused by name when it is set by
 * a flag, an environment variable or the config file. Nothing is silently ignored: an option
 * Quarry accepts without acting on it is a row of `OPTIONS` whose value is validated and
 * whose use is logged at start-up (`ACCEPTED_WITHOUT_EFFECT`).
 *
 * Design decision: the list is keyed by the flag, from which the environment variable
 * (`MEILI_` + upper snake case) and the config-file key (snake case) derive, as they do in
 * Meilisearch; the one exception (`--experimental-legacy-search-default`, whose variable is
 * `MEILI_EXPERIMENTAL_LEGACY_SEARCH`) is spelled out.
 */

/** Meilisearch's environment variable for a flag. */
export function meiliEnvOf(flag: string): string {
  if (flag === '--experimental-legacy-search-default') return 'MEILI_EXPERIMENTAL_LEGACY_SEARCH';
  return `MEILI_${flag.slice(2).replace(/-/g, '_').toUpperCase()}`;
}

/** The config-file key for a flag: `--http-addr` → `http_addr`. */
export function tomlKeyOf(flag: string): string {
  return flag.slice(2).replace(/-/g, '_');
}

/** Meilisearch options Quarry refuses, with the reason given at start-up. */
export const REFUSED: ReadonlyMap<string, string> = new Map([
  ...[
    '--s3-bucket-url',
    '--s3-bucket-region',
    '--s3-bucket-name',
    '--s3-snapshot-prefix',
    '--s3-access-key',
    '--s3-secret-key',
    '--experimental-s3-max-in-flight-parts',
    '--experimental-s3-compression-level',
    '--experimental-s3-signature-duration-seconds',
    '--experimental-s3-multipart-part-size',
    '--experimental-s3-role-arn',
    '--experimental-s3-web-identity-token-file',
  ].map((f): [string, string] => [f, 'Quarry does not upload snapshots to S3']),
]);

/**
 * Options Quarry accepts (and validates) though they change nothing in Quarry, each with the
 * reason, logged once at start-up when the option is set.
 */
export const ACCEPTED_WITHOUT_EFFECT: ReadonlyMap<string, string> = new Map([
  [
    '--experimental-reduce-indexing-memory-usage',
    'Quarry indexes without memory-mapped sorters; there is nothing to reduce',
  ],
  [
    '--experimental-limit-batched-tasks-total-size',
    'Quarry bounds batches by their number of tasks (--experimental-max-number-of-batched-tasks)',
  ],
  ['--experimental-embedding-cache-entries', 'Quarry sizes its query-embedding cache itself'],
  [
    '--experimental-no-edition-2024-for-settings',
    'Quarry has one settings indexer; its results do not depend on the edition',
  ],
]);

/**
 * Every Meilisearch 1.50 start-up option, as `meilisearch --help` lists it (`--help` and
 * `--version` aside). A test checks each one is a row of OPTIONS, refused, or handled elsewhere.
 */
export const MEILISEARCH_FLAGS: readonly string[] = [
  '--config-file-path',
  '--db-path',
  '--dump-dir',
  '--env',
  '--experimental-allowed-ip-networks',
  '--experimental-contains-filter',
  '--experimental-drop-search-after',
  '--experimental-embedding-cache-entries',
  '--experimental-enable-logs-route',
  '--experimental-enable-metrics',
  '--experimental-legacy-search-default',
  '--experimental-limit-batched-tasks-total-size',
  '--experimental-logs-mode',
  '--experimental-max-number-of-batched-tasks',
  '--experimental-nb-searches-per-core',
  '--experimental-no-edition-2024-for-settings',
  '--experimental-personalization-api-key',
  '--experimental-reduce-indexing-memory-usage',
  '--experimental-s3-compression-level',
  '--experimental-s3-max-in-flight-parts',
  '--experimental-s3-multipart-part-size',
  '--experimental-s3-role-arn',
  '--experimental-s3-signature-duration-seconds',
  '--experimental-s3-web-identity-token-file',
  '--experimental-search-queue-size',
  '--http-addr',
  '--http-payload-size-limit',
  '--ignore-dump-if-db-exists',
  '--ignore-missing-dump',
  '--ignore-missing-snapshot',
  '--ignore-snapshot-if-db-exists',
  '--import-dump',
  '--import-snapshot',
  '--log-level',
  '--master-key',
  '--max-indexing-memory',
  '--max-indexing-threads',
  '--no-analytics',
  '--s3-access-key',
  '--s3-bucket-name',
  '--s3-bucket-region',
  '--s3-bucket-url',
  '--s3-secret-key',
  '--s3-snapshot-prefix',
  '--schedule-snapshot',
  '--snapshot-dir',
  '--ssl-auth-path',
  '--ssl-cert-path',
  '--ssl-key-path',
  '--ssl-ocsp-path',
  '--ssl-require-auth',
  '--ssl-resumption',
  '--ssl-tickets',
  '--task-webhook-authorization-header',
  '--task-webhook-url',
  '--upgrade-db',
];

/** The message start-up fails with when a refused option is set. */
export function refusalMessage(flag: string, via: string): string {
  return `${via} is not supported by Quarry: ${REFUSED.get(flag)}. Remove it to start.`;
}
