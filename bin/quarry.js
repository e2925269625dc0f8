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
// A request's garbage dies young, so V8 never grows its young generation past the 1 MB it
// starts with: it was collected every 30 or so searches (0.3-1.2 ms each, on npm with
// `--trace-gc`), a pause some answer waits behind. At 16 MB, 2 collections in 1,200 searches.
require('node:v8').setFlagsFromString('--interrupt-budget=16384 --minimum-invocations-after-ic-update=100 --min-semi-space-size=16');
require('../dist/main.js')
  .main(process.argv.slice(2))
  .catch((err) => {
    process.stderr.write(`quarry: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
