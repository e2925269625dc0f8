/**
 * Headless Chromium for jest tests: `startBrowser()` runs `browser-driver.js` in a child
 * process (puppeteer-core is an ES module jest cannot load on Node 20) and `run(fn, ...args)`
 * calls `fn(ctx, ...args)` there, returning its JSON result. `fn` is sent as text, so it must
 * use only its arguments and `ctx` ({browser, page, state}), never variables of the test file.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import type { Browser, Page } from 'puppeteer-core';

/** Debian's package (`apt-get install chromium`), or CHROMIUM_PATH; null when absent. */
export const CHROMIUM: string | null =
  [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find(
    (p): p is string => !!p && fs.existsSync(p),
  ) ?? null;

export interface DriverContext {
  browser: Browser;
  page: Page;
  state: Record<string, any>;
}

export interface BrowserHandle {
  run<A extends unknown[], R>(fn: (ctx: DriverContext, ...args: A) => Promise<R> | R, ...args: A): Promise<R>;
  close(): Promise<void>;
}

export async function startBrowser(executablePath: string): Promise<BrowserHandle> {
  const child = spawn(process.execPath, [path.join(__dirname, 'browser-driver.js'), executablePath], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const waiting = new Map<number, { resolve(v: any): void; reject(e: Error): void }>();
  let ready: () => void;
  let failed: (e: Error) => void;
  const started = new Promise<void>((res, rej) => {
    ready = res;
    failed = rej;
  });
  child.once('exit', (code) => {
    const err = new Error(`browser driver exited with ${code}`);
    failed(err);
    for (const w of waiting.values()) w.reject(err);
    waiting.clear();
  });
  readline.createInterface({ input: child.stdout! }).on('line', (line) => {
    const msg = JSON.parse(line);
    if (msg.ready) return ready();
    const w = waiting.get(msg.id);
    waiting.delete(msg.id);
    if (msg.ok) w?.resolve(msg.value);
    else w?.reject(new Error(`in the browser driver: ${msg.error}`));
  });
  await started;
  let next = 0;
  return {
    run(fn, ...args) {
      const id = ++next;
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        child.stdin!.write(`${JSON.stringify({ id, source: fn.toString(), args })}\n`);
      });
    },
    close() {
      return new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.stdin!.end();
      });
    },
  };
}
