/**
 * GET / over HTTP: the page with its headers, the JSON status when the page is off
 * (`--no-dashboard`, QUARRY_NO_DASHBOARD, `--env production`) or JSON is asked for, and the
 * page served by the built server (`dist/`, as `npm start` runs it).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../ts/config';
import { PREVIEW_DIR } from '../../ts/preview/page';
import { startChild } from '../helpers/child';
import { startTestServer, tempDir, type TestServer } from '../helpers/server';

const RUNNING = { status: 'Meilisearch is running' };

function inlineHashes(html: string): { script: string; style: string } {
  const hash = (s: string) => `sha256-${createHash('sha256').update(s, 'utf8').digest('base64')}`;
  return {
    script: hash(/<script>([\s\S]*)<\/script>/.exec(html)![1]),
    style: hash(/<style>([\s\S]*)<\/style>/.exec(html)![1]),
  };
}

describe('GET /', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  it('when a browser asks without a key, then the page is served with a policy allowing only its own script and style', async () => {
    const r = await s.api('GET', '/', { key: null });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(r.text).toMatch(/^<!doctype html>/);
    const { script, style } = inlineHashes(r.text);
    expect(r.headers.get('content-security-policy')).toBe(
      `default-src 'none'; script-src '${script}'; style-src '${style}'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    );
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.headers.get('x-frame-options')).toBe('DENY');
    expect(r.headers.get('referrer-policy')).toBe('no-referrer');
    // Everything is inline: no file is fetched from anywhere.
    expect(r.text).not.toMatch(/<script[^>]+src=|<link[^>]+stylesheet|https?:\/\//);
  });

  it("when JSON is asked for, then the answer is Meilisearch's status object", async () => {
    const res = await fetch(`${s.url}/`, { headers: { Accept: 'application/json' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(RUNNING);
  });

  it('when the page is disabled by --no-dashboard, then the answer is the status object', async () => {
    const off = await startTestServer({ args: ['--no-dashboard'] });
    try {
      const r = await off.api('GET', '/', { key: null });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      expect(r.body).toEqual(RUNNING);
    } finally {
      await off.close();
    }
  });

  it('when the options are read, then QUARRY_NO_DASHBOARD and production disable the page', () => {
    expect(loadConfig([], {}).dashboard).toBe(true);
    expect(loadConfig(['--no-dashboard'], {}).dashboard).toBe(false);
    expect(loadConfig(['--no-dashboard=false'], {}).dashboard).toBe(true);
    expect(loadConfig([], { QUARRY_NO_DASHBOARD: 'true' }).dashboard).toBe(false);
    expect(loadConfig([], { QUARRY_NO_DASHBOARD: 'false' }).dashboard).toBe(true);
    expect(loadConfig(['--env', 'production', '--master-key', 'a-master-key-of-16-bytes'], {}).dashboard).toBe(false);
  });

  it('when the server runs from the build (dist/), then it serves the page from the package files', async () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '../../package.json'), 'utf8'));
    expect(pkg.files).toContain(`${path.basename(PREVIEW_DIR)}/`);
    const built = path.join(__dirname, '../../dist/preview/page.js');
    if (!fs.existsSync(built)) throw new Error('dist/ is not built: run `npx tsc -p tsconfig.build.json` first');
    const dbPath = tempDir();
    const { child, url } = await startChild(dbPath);
    try {
      const res = await fetch(`${url}/`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-security-policy')).toMatch(/^default-src 'none'/);
      expect(await res.text()).toContain('<title>Quarry search preview</title>');
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      fs.rmSync(dbPath, { recursive: true, force: true });
    }
  });
});
