/** @type {import('jest').Config} */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

process.env.UV_THREADPOOL_SIZE = process.env.UV_THREADPOOL_SIZE || '16';
// Every temporary directory a test (or a server it starts) makes lands in one directory
// per run, removed when the run ends (__tests__/helpers/teardown.js).
if (!process.env.QUARRY_TEST_TMPDIR) {
  process.env.QUARRY_TEST_TMPDIR = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-jest-'));
  process.env.TMPDIR = process.env.QUARRY_TEST_TMPDIR;
}
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/__tests__', '<rootDir>/ts'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
  testTimeout: 60000,
  maxWorkers: 2,
  globalTeardown: '<rootDir>/__tests__/helpers/teardown.js',
};
