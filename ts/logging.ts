/**
 * winston factory. Lines go through one `LogHub` (`ts/logs/hub.ts`), which writes them to
 * stderr in the start-up format (`--experimental-logs-mode`: `human`, the default, or `json`)
 * at the start-up level (`--log-level`), and to the `/logs/stream` reader when there is one.
 * Both filters change at run time through the `/logs/*` routes (`logHub(logger)`).
 */
import winston from 'winston';
import type { Config } from './config';
import { LogHub, type LogMode, type StreamSink } from './logs/hub';
import { TargetFilter } from './logs/target';

export type Logger = winston.Logger;

const hubs = new WeakMap<Logger, LogHub>();

const stderrSink: StreamSink = {
  write: (line) => void process.stderr.write(line),
  backlog: () => 0,
};

export function createLogger(level: Config['logLevel'], mode: LogMode = 'human'): Logger {
  const logger = winston.createLogger({ level: 'info' });
  const hub = new LogHub(logger, TargetFilter.parse(level), mode, stderrSink);
  logger.add(hub.transport());
  hubs.set(logger, hub);
  return logger;
}

/** The hub behind `logger`; a logger not made by `createLogger` gets one that leaves stderr alone. */
export function logHub(logger: Logger): LogHub {
  let hub = hubs.get(logger);
  if (!hub) {
    hub = new LogHub(logger, TargetFilter.parse('off'), 'json', stderrSink);
    logger.add(hub.transport());
    hubs.set(logger, hub);
  }
  return hub;
}

/**
 * `logger.info(message, fields)` for a line written on every request: handed straight to the
 * logger's hub (the same filters, format and destinations), without winston's object streams,
 * which cost a request more than building and writing the line itself. A logger that
 * `createLogger` did not make takes the line through winston as any other.
 */
export function infoLine(logger: Logger, message: string, fields: Record<string, unknown>): void {
  const hub = hubs.get(logger);
  if (hub === undefined) logger.info(message, fields);
  else hub.dispatch({ ...fields, level: 'info', message });
}

/** A request path safe to log: `/keys/<uid or key value>` never reaches the logs. */
export function loggablePath(p: string): string {
  return p.startsWith('/keys/') ? '/keys/:key' : p;
}
