/** winston factory: one JSON line per event; the level comes from the CLI. */
import winston from 'winston';
import type { Config } from './config';

export type Logger = winston.Logger;

export function createLogger(level: Config['logLevel']): Logger {
  const winstonLevel = level === 'trace' ? 'silly' : level === 'off' ? 'error' : level;
  return winston.createLogger({
    level: winstonLevel,
    silent: level === 'off',
    format: winston.format.combine(winston.format.timestamp(), winston.format.json()),
    transports: [new winston.transports.Console({ stderrLevels: ['error', 'warn', 'info', 'debug', 'verbose', 'silly'] })],
  });
}

/** A request path safe to log: `/keys/<uid or key value>` never reaches the logs. */
export function loggablePath(p: string): string {
  return p.startsWith('/keys/') ? '/keys/:key' : p;
}
