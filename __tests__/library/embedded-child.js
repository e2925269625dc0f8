// An app embedding Quarry that writes until it is killed: prints `ack <taskUid> <firstId> <count>`
// for every addition once its task is acknowledged (on disk). Used by crash.test.ts.
'use strict';
const { Quarry } = require('../../dist/index.js');

(async () => {
  const quarry = await Quarry.open({ dbPath: process.argv[2], logLevel: 'error' });
  const index = quarry.index('crash');
  const count = 2000;
  for (let batch = 0; ; batch++) {
    const docs = Array.from({ length: count }, (_, i) => ({
      id: batch * count + i,
      text: `document ${batch * count + i} of batch ${batch}`,
    }));
    const task = await index.addDocuments(docs);
    process.stdout.write(`ack ${task.taskUid} ${batch * count} ${count}\n`);
  }
})().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});
