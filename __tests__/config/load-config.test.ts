/**
 * loadConfig: every Meilisearch option accounted for, the TOML config file and its
 * precedence, refusals by name, the TLS option rules. Real files in a temporary directory.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, helpText, loadConfig, OPTIONS } from '../../ts/config';
import { ACCEPTED_WITHOUT_EFFECT, MEILISEARCH_FLAGS, meiliEnvOf, REFUSED } from '../../ts/startup/meili-options';

function dir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-config-'));
}

function withFile(toml: string): string {
  const d = dir();
  fs.writeFileSync(path.join(d, 'config.toml'), toml);
  return d;
}

function failure(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('Meilisearch start-up options', () => {
  it('when listing every Meilisearch 1.50 option, then each is a Quarry option or refused', () => {
    const flags = new Set(OPTIONS.map((o) => o.flag));
    const unaccounted = MEILISEARCH_FLAGS.filter((f) => !flags.has(f) && !REFUSED.has(f));
    expect(unaccounted).toEqual([]);
    // Nothing is both supported and refused.
    expect([...REFUSED.keys()].filter((f) => flags.has(f))).toEqual([]);
    for (const f of ACCEPTED_WITHOUT_EFFECT.keys()) expect(flags.has(f)).toBe(true);
  });

  it('when a supported option has a MEILI_* variable, then it is the one Meilisearch reads', () => {
    for (const o of OPTIONS) {
      if (MEILISEARCH_FLAGS.includes(o.flag)) expect([o.flag, o.meili]).toEqual([o.flag, meiliEnvOf(o.flag)]);
    }
  });

  it.each([...REFUSED.keys()])(
    'when %s is set by flag, variable or config key, then start-up fails naming it',
    (flag) => {
      const needsValue = !flag.startsWith('--ssl-');
      const argv = needsValue ? [flag, 'x'] : [flag];
      expect(failure(() => loadConfig(argv, {}, { cwd: dir() }))).toContain(`\`${flag}\` is not supported by Quarry`);
      const env = meiliEnvOf(flag);
      expect(failure(() => loadConfig([], { [env]: 'x' }, { cwd: dir() }))).toContain(`\`${env}\``);
      const key = flag.slice(2).replace(/-/g, '_');
      expect(failure(() => loadConfig([], {}, { cwd: withFile(`${key} = "x"\n`) }))).toContain(`\`${key}\``);
    },
  );

  it('when an unknown MEILI_* variable is set, then it is ignored (it is no Meilisearch option)', () => {
    expect(loadConfig([], { MEILI_HOST: 'http://x', MEILI_API_KEY: 'k' }, { cwd: dir() }).port).toBe(7700);
  });

  it('when an option accepted without effect is set, then it is validated and reported', () => {
    const c = loadConfig(
      ['--experimental-embedding-cache-entries', '10', '--experimental-reduce-indexing-memory-usage'],
      { MEILI_EXPERIMENTAL_LIMIT_BATCHED_TASKS_TOTAL_SIZE: '1 GiB' },
      { cwd: dir() },
    );
    expect(c.acceptedWithoutEffect).toHaveLength(3);
    expect(c.acceptedWithoutEffect.join('\n')).toContain('--experimental-reduce-indexing-memory-usage');
    expect([
      c.upgradeDb,
      loadConfig(['--upgrade-db'], {}, { cwd: dir() }).upgradeDb,
      loadConfig([], { MEILI_UPGRADE_DB: 'true' }, { cwd: dir() }).upgradeDb,
    ]).toEqual([false, true, true]);
    expect(failure(() => loadConfig(['--experimental-embedding-cache-entries', 'many'], {}, { cwd: dir() }))).toContain(
      '--experimental-embedding-cache-entries',
    );
    expect(
      failure(() => loadConfig(['--experimental-limit-batched-tasks-total-size', 'big'], {}, { cwd: dir() })),
    ).toContain('big');
  });

  it('when --experimental-contains-filter or MEILI_EXPERIMENTAL_LEGACY_SEARCH is set, then the feature is on at start', () => {
    const c = loadConfig(
      ['--experimental-contains-filter'],
      { MEILI_EXPERIMENTAL_LEGACY_SEARCH: 'true' },
      { cwd: dir() },
    );
    expect([c.containsFilterAtStart, c.legacySearchAtStart]).toEqual([true, true]);
    const d = loadConfig([], {}, { cwd: dir() });
    expect([d.containsFilterAtStart, d.legacySearchAtStart]).toEqual([false, false]);
  });

  it("when --experimental-mcp, QUARRY_EXPERIMENTAL_MCP or experimental_mcp in the file is set, then /mcp is served (Quarry's own option, off by default)", () => {
    expect(loadConfig([], {}, { cwd: dir() }).experimentalMcp).toBe(false);
    expect(loadConfig(['--experimental-mcp'], {}, { cwd: dir() }).experimentalMcp).toBe(true);
    expect(loadConfig([], { QUARRY_EXPERIMENTAL_MCP: 'true' }, { cwd: dir() }).experimentalMcp).toBe(true);
    expect(loadConfig([], {}, { cwd: withFile('experimental_mcp = true\n') }).experimentalMcp).toBe(true);
    expect(failure(() => loadConfig([], { QUARRY_EXPERIMENTAL_MCP: 'sure' }, { cwd: dir() }))).toContain(
      '--experimental-mcp',
    );
    expect(MEILISEARCH_FLAGS).not.toContain('--experimental-mcp');
    expect(helpText()).toMatch(/^ {2}--experimental-mcp +QUARRY_EXPERIMENTAL_MCP +serve POST \/mcp/m);
  });

  it('when --experimental-search-response-budget is set (flag, QUARRY_SEARCH_RESPONSE_BUDGET or the file), then it is a size; 0 is no bound; default 256 MiB (issue 71)', () => {
    expect(loadConfig([], {}, { cwd: dir() }).searchResponseBudget).toBe(256 * 1024 ** 2);
    expect(
      loadConfig(['--experimental-search-response-budget', '64MiB'], {}, { cwd: dir() }).searchResponseBudget,
    ).toBe(64 * 1024 ** 2);
    expect(loadConfig([], { QUARRY_SEARCH_RESPONSE_BUDGET: '0' }, { cwd: dir() }).searchResponseBudget).toBe(0);
    expect(
      loadConfig([], {}, { cwd: withFile('experimental_search_response_budget = 1000000\n') }).searchResponseBudget,
    ).toBe(1_000_000);
    expect(
      loadConfig([], {}, { cwd: withFile('experimental_search_response_budget = "2 MB"\n') }).searchResponseBudget,
    ).toBe(2_000_000);
    expect(failure(() => loadConfig(['--experimental-search-response-budget', 'lots'], {}, { cwd: dir() }))).toBe(
      '--experimental-search-response-budget: `lots` is not a valid size',
    );
    expect(MEILISEARCH_FLAGS).not.toContain('--experimental-search-response-budget');
  });

  it('when --max-indexing-memory or --max-indexing-threads is set (flag, MEILI_* or the file), then the indexer gets it; unset, the engine decides (issue 69)', () => {
    const unset = loadConfig([], {}, { cwd: dir() });
    expect([unset.maxIndexingMemory, unset.maxIndexingThreads]).toEqual([null, null]);
    const set = loadConfig(['--max-indexing-memory', '256MiB', '--max-indexing-threads', '1'], {}, { cwd: dir() });
    expect([set.maxIndexingMemory, set.maxIndexingThreads]).toEqual([256 * 1024 ** 2, 1]);
    const env = loadConfig(
      [],
      { MEILI_MAX_INDEXING_MEMORY: '2 GB', MEILI_MAX_INDEXING_THREADS: 'unlimited' },
      { cwd: dir() },
    );
    expect([env.maxIndexingMemory, env.maxIndexingThreads]).toEqual([2e9, null]);
    const file = loadConfig([], {}, { cwd: withFile('max_indexing_memory = "1 GiB"\nmax_indexing_threads = 2\n') });
    expect([file.maxIndexingMemory, file.maxIndexingThreads]).toEqual([1024 ** 3, 2]);
    expect(failure(() => loadConfig(['--max-indexing-memory', 'lots'], {}, { cwd: dir() }))).toBe(
      '--max-indexing-memory: `lots` is not a valid size',
    );
    expect(failure(() => loadConfig(['--max-indexing-threads', '0'], {}, { cwd: dir() }))).toBe(
      '--max-indexing-threads: `0` is not a positive integer',
    );
  });

  it('when asking for --help, then every option and every refused Meilisearch option is listed', () => {
    const help = helpText();
    for (const o of OPTIONS) expect(help).toContain(o.flag);
    for (const f of REFUSED.keys()) expect(help).toContain(f);
  });
});

describe('the configuration file', () => {
  it('when ./config.toml exists, then it is read; CLI > environment > file > default', () => {
    const cwd = withFile(
      'db_path = "/from/file"\nhttp_addr = "127.0.0.1:1111"\nmaster_key = "file-key-0123456789"\nenv = "production"\nno_analytics = true\nmax_indexing_threads = 3\nexperimental_search_queue_size = 7\nhttp_payload_size_limit = "2 MB"\n',
    );
    const c = loadConfig([], {}, { cwd });
    expect(c.configFile).toBe(path.join(cwd, 'config.toml'));
    expect([
      c.dbPath,
      c.port,
      c.masterKey,
      c.env,
      c.noAnalytics,
      c.maxIndexingThreads,
      c.searchQueueSize,
      c.payloadSizeLimit,
    ]).toEqual(['/from/file', 1111, 'file-key-0123456789', 'production', true, 3, 7, 2_000_000]);
    const e = loadConfig([], { MEILI_HTTP_ADDR: '127.0.0.1:2222', QUARRY_DB_PATH: '/from/env' }, { cwd });
    expect([e.port, e.dbPath, e.masterKey]).toEqual([2222, '/from/env', 'file-key-0123456789']);
    const f = loadConfig(['--http-addr', '127.0.0.1:3333'], { MEILI_HTTP_ADDR: '127.0.0.1:2222' }, { cwd });
    expect(f.port).toBe(3333);
  });

  it('when no file is named and ./config.toml is absent, then defaults apply', () => {
    const c = loadConfig([], {}, { cwd: dir() });
    expect([c.configFile, c.dbPath, c.httpAddr, c.noAnalytics]).toEqual([null, './data.ms', 'localhost:7700', false]);
  });

  it('when --config-file-path or MEILI_CONFIG_FILE_PATH names a file, then that file is read instead of ./config.toml', () => {
    const cwd = withFile('db_path = "/default-file"\n');
    fs.writeFileSync(path.join(cwd, 'other.toml'), 'db_path = "/other-file"\n');
    expect(loadConfig(['--config-file-path', 'other.toml'], {}, { cwd }).dbPath).toBe('/other-file');
    expect(loadConfig([], { MEILI_CONFIG_FILE_PATH: path.join(cwd, 'other.toml') }, { cwd }).dbPath).toBe(
      '/other-file',
    );
  });

  it('when the named file is missing, then start-up fails naming it', () => {
    const cwd = dir();
    expect(failure(() => loadConfig(['--config-file-path', 'missing.toml'], {}, { cwd }))).toContain('missing.toml');
    expect(failure(() => loadConfig([], { MEILI_CONFIG_FILE_PATH: 'missing.toml' }, { cwd }))).toContain(
      'missing.toml',
    );
  });

  it.each([
    ['bogus_key = 1', '`bogus_key`'],
    ['no_analytics = "yes"', '`no_analytics` has string `yes`, expected a boolean'],
    ['http_addr = 7700', '`http_addr` has integer `7700`, expected a string'],
    ['http_payload_size_limit = 1000', '`http_payload_size_limit` has integer `1000`, expected a string'],
    ['experimental_search_queue_size = "10"', '`experimental_search_queue_size` has string `10`, expected an integer'],
    ['config_file_path = "x.toml"', '`config_file_path` is not supported in the configuration file'],
    ['this is not toml', 'not valid TOML'],
  ])('when the file has `%s`, then start-up fails with %s', (toml, expected) => {
    expect(failure(() => loadConfig([], {}, { cwd: withFile(`${toml}\n`) }))).toContain(expected);
  });

  it('when a file value is valid TOML but a bad option value, then the option parser refuses it', () => {
    expect(failure(() => loadConfig([], {}, { cwd: withFile('env = "staging"\n') }))).toContain('--env');
  });

  it('when TLS options are in the file, then they are read like flags', () => {
    const c = loadConfig(
      [],
      {},
      {
        cwd: withFile(
          'ssl_cert_path = "/c.pem"\nssl_key_path = "/k.pem"\nssl_auth_path = "/ca.pem"\nssl_require_auth = true\nssl_tickets = true\n',
        ),
      },
    );
    expect(c.tls).toEqual({
      certPath: '/c.pem',
      keyPath: '/k.pem',
      authPath: '/ca.pem',
      ocspPath: null,
      requireAuth: true,
      resumption: false,
      tickets: true,
    });
  });
});

describe('TLS options', () => {
  const cwd = dir();
  it('when no --ssl-* option is set, then the server speaks plain HTTP', () => {
    expect(loadConfig([], {}, { cwd }).tls).toBeNull();
  });
  it.each([
    [['--ssl-cert-path', '/c.pem'], '--ssl-cert-path needs --ssl-key-path'],
    [['--ssl-key-path', '/k.pem'], '--ssl-key-path needs --ssl-cert-path'],
    [
      ['--ssl-cert-path', '/c.pem', '--ssl-key-path', '/k.pem', '--ssl-require-auth'],
      '--ssl-require-auth needs --ssl-auth-path',
    ],
    [['--ssl-tickets'], '--ssl-tickets: TLS options need --ssl-cert-path and --ssl-key-path'],
    [['--ssl-auth-path', '/ca.pem'], '--ssl-auth-path: TLS options need'],
  ])('when %j, then start-up fails: %s', (argv, expected) => {
    expect(failure(() => loadConfig(argv, {}, { cwd }))).toContain(expected);
  });
  it('when MEILI_SSL_* variables are set, then they configure TLS', () => {
    const c = loadConfig(
      [],
      {
        MEILI_SSL_CERT_PATH: '/c.pem',
        MEILI_SSL_KEY_PATH: '/k.pem',
        MEILI_SSL_RESUMPTION: 'true',
        MEILI_SSL_OCSP_PATH: '/o.der',
      },
      { cwd },
    );
    expect(c.tls).toMatchObject({
      certPath: '/c.pem',
      keyPath: '/k.pem',
      resumption: true,
      tickets: false,
      ocspPath: '/o.der',
    });
  });
});

describe('telemetry options', () => {
  const cwd = dir();
  it('when nothing is set, then telemetry is on, sends nowhere, every hour', () => {
    const c = loadConfig([], {}, { cwd });
    expect([c.noAnalytics, c.analyticsUrl, c.analyticsIntervalMs]).toEqual([false, null, 3_600_000]);
  });
  it('when the URL is not http(s), then start-up fails naming the option', () => {
    expect(failure(() => loadConfig(['--experimental-analytics-url', 'ftp://x'], {}, { cwd }))).toContain(
      '--experimental-analytics-url',
    );
    expect(
      loadConfig([], { QUARRY_ANALYTICS_URL: 'http://127.0.0.1:9/batch', MEILI_NO_ANALYTICS: 'true' }, { cwd }),
    ).toMatchObject({ analyticsUrl: 'http://127.0.0.1:9/batch', noAnalytics: true });
  });
});
