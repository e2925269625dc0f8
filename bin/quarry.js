#!/usr/bin/env node
'use strict';
// Indexing batches, staging, fetches and searches run as N-API async tasks on the libuv pool:
// give it room so that one long batch never starves the others (must precede the first use).
process.env.UV_THREADPOOL_SIZE = process.env.UV_THREADPOOL_SIZE || '16';
// A fresh server's JavaScript (HTTP parsing, validation, answers) runs unoptimized until V8
// has seen it often enough; by default that takes thousands of requests, which a restarted
// server then answers slower (npm, `bench/run.js`: the 8 search shapes' p99s summed 20.1 ms
// with V8's defaults, 16.9 ms so). V8 reads these when a function first runs, so they are set
// before any of the server's code loads.
require('node:v8').setFlagsFromString('--interrupt-budget=16384 --minimum-invocations-after-ic-update=100');
require('../dist/main.js')
  .main(process.argv.slice(2))
  .catch((err) => {
    process.stderr.write(`quarry: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
