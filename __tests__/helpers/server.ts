/**
 * startTestServer(): a real Quarry server in this process, on a loopback port, with its
 * own temporary data directory. `api()` never throws on status: tests assert on it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Config, loadConfig } from '../../ts/config';
import { createLogger } from '../../ts/logging';
import { type RunningServer, startServer } from '../../ts/server';

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

export interface ApiOptions {
  body?: unknown;
  raw?: string | Buffer;
  contentType?: string | null;
  key?: string | null;
  /** More request headers. */
  headers?: Record<string, string>;
}

export interface TestServer {
  url: string;
  dbPath: string;
  server: RunningServer;
  api<T = any>(method: string, p: string, opts?: ApiOptions): Promise<ApiResponse<T>>;
  waitTask(uid: number, timeoutMs?: number): Promise<any>;
  close(): Promise<void>;
}

export const MASTER_KEY = 'test-master-key-0123456789';

let counter = 0;
export function uniqueIndex(prefix = 'idx'): string {
  counter += 1;
  return `${prefix}_${process.pid}_${counter}_${Date.now() % 100000}`;
}

export function tempDir(prefix = 'quarry-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export async function startTestServer(
  opts: { masterKey?: string | null; args?: string[]; dbPath?: string } = {},
): Promise<TestServer> {
  const dbPath = opts.dbPath ?? tempDir();
  const masterKey = opts.masterKey === undefined ? MASTER_KEY : opts.masterKey;
  const args = ['--http-addr', '127.0.0.1:0', '--db-path', dbPath, '--log-level', 'off', ...(opts.args ?? [])];
  if (masterKey !== null) args.push('--master-key', masterKey);
  const config: Config = loadConfig(args, {});
  const server = await startServer(config, createLogger(config.logLevel));
  const url = server.url;

  async function api(method: string, p: string, o: ApiOptions = {}): Promise<ApiResponse> {
    const headers: Record<string, string> = { ...o.headers };
    const key = o.key === undefined ? masterKey : o.key;
    if (key !== null && key !== undefined) headers.Authorization = `Bearer ${key}`;
    let body: string | Buffer | undefined;
    if (o.raw !== undefined) body = typeof o.raw === 'string' ? Buffer.from(o.raw) : o.raw;
    else if (o.body !== undefined) body = JSON.stringify(o.body);
    const ct = o.contentType === undefined ? (body !== undefined ? 'application/json' : null) : o.contentType;
    if (ct !== null) headers['Content-Type'] = ct;
    const res = await fetch(url + p, { method, headers, body });
    const text = await res.text();
    let parsed: unknown;
    if (text.length) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    return { status: res.status, body: parsed, text, headers: res.headers };
  }

  async function waitTask(uid: number, timeoutMs = 20000): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const r = await api('GET', `/tasks/${uid}`);
      if (r.status !== 200) throw new Error(`GET /tasks/${uid}: ${r.status} ${r.text}`);
      if (r.body.status !== 'enqueued' && r.body.status !== 'processing') return r.body;
      if (Date.now() > deadline) throw new Error(`task ${uid} still ${r.body.status}`);
      await new Promise((res) => setTimeout(res, 10));
    }
  }

  return { url, dbPath, server, api, waitTask, close: () => server.close() };
}
