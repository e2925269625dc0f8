// Removes the run's temporary directory (see jest.config.js).
const fs = require('node:fs');

module.exports = async function teardown() {
  const dir = process.env.QUARRY_TEST_TMPDIR;
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
};
