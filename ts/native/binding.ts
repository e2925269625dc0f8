/**
 * The loaded addon, typed by the declaration file that `napi build --dts` generates from the
 * Rust binding (`native/index.d.ts`, built by `npm ci`/`npm run build` before `tsc` runs), and
 * the one place where its errors become `ApiError`s (↔ `crates/node/src/lib.rs`).
 *
 * Because the wrappers in this directory call the addon through these generated types, a
 * change of a Rust signature that the wrappers do not follow fails `tsc --noEmit`.
 */
import { ApiError } from '../errors/api-error';
import type * as Native from '../../native/index';

/** One row of the Rust error table. */
export type ErrorCodeRow = Native.ErrorCodeRow;

// The generated loader sits in `native/` at the repository root, so the same relative path
// works from `ts/native` (tests run through swc) and from `dist/native` (the built server).
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const binding: typeof Native = require('../../native/index.js');

/**
 * Rethrows an addon error as an ApiError. The binding encodes user-facing errors as a JSON
 * message `{"code","message"}` (napi's own `code` property only carries napi statuses).
 */
function translate(err: unknown): never {
  const e = err as { message?: unknown };
  if (e && typeof e.message === 'string' && e.message.startsWith('{"code":')) {
    let parsed: { code?: unknown; message?: unknown } | undefined;
    try {
      parsed = JSON.parse(e.message) as { code?: unknown; message?: unknown };
    } catch {
      parsed = undefined;
    }
    if (parsed && typeof parsed.code === 'string' && catalogByCode().has(parsed.code)) {
      throw new ApiError(parsed.code, String(parsed.message ?? ''));
    }
  }
  throw err;
}

/** Awaits an async addon call, translating its errors. */
export async function call<T>(p: () => Promise<T>): Promise<T> {
  try {
    return await p();
  } catch (err) {
    translate(err);
  }
}

/** Makes a synchronous addon call, translating its errors. */
export function callSync<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    translate(err);
  }
}

let catalogCache: Map<string, ErrorCodeRow> | undefined;

/** The error table of the Rust `api-types` crate, keyed by code. */
export function catalogByCode(): Map<string, ErrorCodeRow> {
  if (!catalogCache) catalogCache = new Map(binding.errorCatalog().map((r) => [r.code, r]));
  return catalogCache;
}

/** The networks the engine's outbound requests (remote embedders) may reach. */
export function configureOutbound(allowedNetworks: string[]): void {
  binding.configureOutbound(allowedNetworks);
}

/** See the binding: a remote embedder's request time-out and retry duration, in seconds. */
export function configureRemoteEmbedders(timeoutSeconds: number | null, maxRetryDurationSeconds: number | null): void {
  binding.configureRemoteEmbedders(timeoutSeconds, maxRetryDurationSeconds);
}

/** Where local models are, and the ONNX Runtime library they run on (null: not configured). */
export function configureModels(modelsDir: string | null, onnxRuntimePath: string | null): void {
  binding.configureModels(modelsDir, onnxRuntimePath);
}

/** Renders a document template with a document (JSON; null: only checks the template). */
export function renderTemplate(template: string, documentJson: string | null): string | null {
  try {
    return binding.renderTemplate(template, documentJson) ?? null;
  } catch (err) {
    translate(err);
  }
}

/** Checks one embedder of a settings update against its source's field rules (throws). */
export function checkEmbedder(name: string, patch: unknown): void {
  try {
    binding.checkEmbedder(name, JSON.stringify(patch));
  } catch (err) {
    translate(err);
  }
}

/** A short scheduler slice for the calling thread (Linux 6.12+): whether the kernel took it. */
export function shortenSlice(): boolean {
  return binding.shortenSlice();
}

/** Returns the memory the Rust allocator holds free to the operating system (after a burst). */
export function releaseFreeMemory(): Promise<void> {
  return binding.releaseFreeMemory();
}

export function engineVersion(): string {
  return binding.engineVersion();
}

/** The engine's locale table: `[twoLetter, threeLetter]` pairs, then `[cmn]` alone. */
export function settingsLocales(): string[][] {
  return binding.settingsLocales();
}

/** The engine's redaction of a secret (embedder API keys). */
export function hideSecret(secret: string): string {
  return binding.hideSecret(secret);
}
