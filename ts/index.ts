/**
 * quarry-search as a library: `Quarry` embeds the engine in this process (no HTTP, no port);
 * `startServer` runs the HTTP server from code.
 */
export { Quarry, type QuarryOptions } from './library/quarry';
export { QuarryIndex } from './library/index-handle';
export { QuarryError } from './library/errors';
export type * from './library/types';
export { loadConfig, type Config } from './config';
export { createLogger } from './logging';
export { startServer, type RunningServer } from './server';
