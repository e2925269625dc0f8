#!/usr/bin/env node
'use strict';
require('../dist/main.js')
  .main(process.argv.slice(2))
  .catch((err) => {
    process.stderr.write(`quarry: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
