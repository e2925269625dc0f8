// Runs headless Chromium through puppeteer-core for a jest test, in a process of its own:
// puppeteer-core is an ES module that Node's require loads but jest's registry cannot.
// Protocol (one JSON object a line): in {id, source, args}: `source` is a function's text,
// called as fn(ctx, ...args) with ctx = {browser, page, state}; out {id, ok, value|error}.
'use strict';
const readline = require('node:readline');
const mod = require('puppeteer-core');
const puppeteer = mod.default ?? mod;

const [executablePath] = process.argv.slice(2);
const ctx = { browser: null, page: null, state: {} };

async function main() {
  ctx.browser = await puppeteer.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
  const lines = readline.createInterface({ input: process.stdin });
  for await (const line of lines) {
    const { id, source, args } = JSON.parse(line);
    let out;
    try {
      // biome-ignore lint/security/noGlobalEval: the test sends the page a function's source to run
      // biome-ignore lint/complexity/noCommaOperator: an indirect eval, in the global scope
      const fn = (0, eval)(`(${source})`);
      out = { id, ok: true, value: (await fn(ctx, ...args)) ?? null };
    } catch (err) {
      out = { id, ok: false, error: String(err?.stack ? err.stack : err) };
    }
    process.stdout.write(`${JSON.stringify(out)}\n`);
  }
  await ctx.browser.close();
}

main().catch((err) => {
  process.stderr.write(`browser driver: ${err?.stack ? err.stack : err}\n`);
  process.exit(1);
});
