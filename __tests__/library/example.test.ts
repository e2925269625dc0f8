/** The example app (`examples/library-search`): Quarry embedded behind a plain Node HTTP server. */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const APP = path.join(__dirname, '../../examples/library-search/server.js');

it('given the example app with its built-in rows, when the search box asks for "zod", then the library answers with a highlighted first hit', async () => {
  const db = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-example-'));
  const app = spawn(process.execPath, [APP, '--port', '0', '--db', db], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      app.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /search box on (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      app.once('exit', (code) => reject(new Error(`the example exited with ${code}: ${out}`)));
    });
    const page = await fetch(url);
    expect(await page.text()).toContain('Search packages');
    const res = await fetch(`${url}/search?q=zod`);
    const body = (await res.json()) as { hits: Array<{ name: string; _formatted: { name: string } }> };
    expect(body.hits[0]!.name).toBe('zod');
    expect(body.hits[0]!._formatted.name).toBe('<em>zod</em>');
  } finally {
    app.kill('SIGTERM');
    await new Promise((r) => app.once('exit', r));
    fs.rmSync(db, { recursive: true, force: true });
  }
}, 60_000);

describe('given the Markdown folder example', () => {
  const SEARCH = path.join(__dirname, '../../examples/markdown-folder/search.js');
  const run = (args: string[]) => execFileSync(process.execPath, [SEARCH, ...args], { encoding: 'utf8' });

  it('when a folder is searched, changed and searched again, then hits name the file and line, and only what changed is read again', () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-notes-'));
    const db = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-notes-db-'));
    try {
      fs.writeFileSync(
        path.join(folder, 'garden.md'),
        '# Gardening\n\nSoil first.\n\n## Tomatoes\n\nWater tomatoes deeply.\n\n```\n# not a heading\n```\n\n## Roses\n\nPrune roses in winter.\n',
      );
      fs.mkdirSync(path.join(folder, 'kitchen'));
      fs.writeFileSync(
        path.join(folder, 'kitchen', 'sauce.md'),
        '# Sauces\n\n## Tomato sauce\n\nSimmer with garlic.\n',
      );
      const first = run([folder, 'tomatos', '--db', db]);
      expect(first).toContain('2 files: 5 sections read, 0 dropped');
      expect(first).toMatch(/garden\.md:5 {2}.*Tomato/);
      expect(first).toMatch(/kitchen\/sauce\.md:3 {2}.*Tomato.* sauce/);
      expect(run([folder, 'prune', '--db', db])).toMatch(
        /^2 files: 0 sections read, 0 dropped\ngarden\.md:13 {2}Roses\n/,
      );
      fs.rmSync(path.join(folder, 'kitchen', 'sauce.md'));
      fs.writeFileSync(path.join(folder, 'garden.md'), '# Gardening\n\n## Tomatoes\n\nStake the tomatoes.\n');
      const after = run([folder, 'tomato', '--db', db]);
      expect(after).toContain('1 files: 2 sections read, 5 dropped');
      expect(after).toMatch(/garden\.md:3 {2}.*Tomato.*\n.*Stake/);
      expect(after).toContain('1 sections match');
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
      fs.rmSync(db, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('given the desktop app example', () => {
  it('when a query is typed a key at a time, then each keystroke is answered, ending on the command asked for', () => {
    const files = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-app-files-'));
    try {
      fs.writeFileSync(path.join(files, 'settings-notes.txt'), 'x');
      const out = execFileSync(
        process.execPath,
        [path.join(__dirname, '../../examples/local-app/demo.js'), '--files', files, '--type', 'open setings'],
        { encoding: 'utf8' },
      );
      const lines = out.trim().split('\n');
      expect(lines).toHaveLength('open setings'.length);
      expect(lines[0]).toMatch(/^"o" +[\d.]+ ms {2}\d+ hits {2}command: <mark>O<\/mark>pen Settings$/);
      expect(lines[lines.length - 1]).toMatch(
        /^"open setings" +[\d.]+ ms {2}\d+ hits {2}command: <mark>Open<\/mark> <mark>Setting<\/mark>s$/,
      );
    } finally {
      fs.rmSync(files, { recursive: true, force: true });
    }
  }, 60_000);
});
