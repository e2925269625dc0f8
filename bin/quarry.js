#!/usr/bin/env node
'use strict';
// Indexing batches, staging, fetches and searches run as N-API async tasks on the libuv pool:
// give it room so that one long batch never starves the others (must precede the first use).
process.env.UV_THREADPOOL_SIZE = process.env.UV_THREADPOOL_SIZE || '16';
require('../dist/main.js')
  .main(process.argv.slice(2))
  .catch((err) => {
    process.stderr.write(`quarry: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
