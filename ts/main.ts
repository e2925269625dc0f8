/** Process entry: configuration, logger, server, signals. */
import { ConfigError, helpText, loadConfig } from './config';
import { createLogger } from './logging';
import { startServer } from './server';
import { favourRequestThreads } from './startup/threads';

export async function main(argv: string[]): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${helpText()}\n`);
    return;
  }
  if (argv.includes('--version') || argv.includes('-V')) {
    process.stdout.write(`quarry ${(require('../package.json') as { version: string }).version}\n`);
    return;
  }
  favourRequestThreads();
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(argv, process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`quarry: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel, config.logsMode);
  if (!config.masterKey) {
    logger.warn(
      'No master key was found: every route but /keys is open. Set --master-key (16+ bytes) to protect this instance.',
    );
  } else if (Buffer.byteLength(config.masterKey) < 16) {
    logger.warn('The master key is shorter than 16 bytes: use a longer one.');
  }
  if (config.configFile) logger.info('configuration file read', { file: config.configFile });
  for (const line of config.acceptedWithoutEffect) logger.warn(line);
  let server = await startServer(config, logger);
  process.stdout.write(`Quarry listening on ${server.url} (data in ${server.deps.dbPath})\n`);
  // A replicated instance that fell behind the log's retention closes and starts again: the
  // start replaces its data with the group's latest snapshot and reads the log from there.
  let closing = false;
  const restartWhenNeeded = (s: typeof server) =>
    s.onRestartNeeded((reason) => {
      if (closing) return;
      logger.warn("restarting from the replicated group's latest snapshot", { reason });
      s.close()
        .then(() => startServer(config, logger))
        .then((next) => {
          server = next;
          restartWhenNeeded(next);
          logger.info('restarted', { url: next.url });
        })
        .catch((err: unknown) => {
          logger.error('restart failed', { error: err instanceof Error ? err.message : String(err) });
          process.exit(1);
        });
    });
  restartWhenNeeded(server);
  const analytics = server.deps.analytics;
  process.stdout.write(
    analytics
      ? `Anonymous telemetry: enabled${config.analyticsUrl ? '' : ' (counters only: no --experimental-analytics-url, nothing is sent)'}\nInstance UID: ${analytics.instanceUid}\n`
      : 'Anonymous telemetry: disabled\n',
  );
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info('shutting down', { signal });
    server.close().then(
      () => process.exit(0),
      (err) => {
        logger.error('shutdown failed', { error: String(err) });
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((err) => {
    process.stderr.write(`quarry: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
