/** The example app (`examples/library-search`): Quarry embedded behind a plain Node HTTP server. */
import { spawn } from 'node:child_process';
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
