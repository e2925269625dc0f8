/**
 * quarry-search as a library. Today: start the HTTP server from code. The embedded,
 * HTTP-less `Quarry` API arrives with the library issue.
 */
export { loadConfig, type Config } from './config';
export { createLogger } from './logging';
export { startServer, type RunningServer } from './server';
