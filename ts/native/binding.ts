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
export const binding: typeof Native = loadBinding();

function loadBinding(): typeof Native {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('../../native/index.js') as typeof Native;
  } catch (err) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const targets = (require('../../package.json') as { napi: { targets: string[] } }).napi.targets;
    throw new Error(missingEngineMessage(platformName(), targets.map(targetName)), { cause: err });
  }
}

/**
 * Why the engine did not load, and the way out: the napi loader's own message blames an npm
 * bug whatever the cause, which sends a user on a platform without a prebuilt engine the wrong
 * way. `here` is this machine's `platform-arch[-abi]`; `prebuilt` the packages published.
 */
export function missingEngineMessage(here: string, prebuilt: string[]): string {
  const list = prebuilt.join(', ');
  if (prebuilt.includes(here)) {
    return `quarry-search could not load its engine for ${here}: the package quarry-search-${here} is missing or damaged. Reinstall without omitting optional dependencies (\`npm install\`, not \`--omit=optional\`), so npm installs it.`;
  }
  return `quarry-search has no prebuilt engine for ${here} (prebuilt: ${list}). Build it from source with a Rust toolchain: in a checkout of quarry-search, \`npm ci\` builds the engine for this machine.`;
}

/** This machine as the platform packages name it: `linux-x64-gnu`, `darwin-arm64`, `win32-x64-msvc`. */
function platformName(): string {
  const base = `${process.platform}-${process.arch}`;
  if (process.platform === 'win32') return `${base}-msvc`;
  if (process.platform !== 'linux') return base;
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
  return `${base}-${header?.glibcVersionRuntime ? 'gnu' : 'musl'}`;
}

/** A Rust target triple of `package.json`'s `napi.targets` as a platform package's suffix. */
function targetName(triple: string): string {
  const [arch, , os, abi] = triple.split('-') as [string, string, string, string | undefined];
  // Node's names of the CPUs and systems the triples name otherwise.
  const nodeNames: Record<string, string> = { x86_64: 'x64', aarch64: 'arm64', windows: 'win32' };
  const name = (part: string) => nodeNames[part] ?? part;
  return [name(os), name(arch), ...(abi && os !== 'darwin' ? [abi] : [])].join('-');
}

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

/** What the indexer may use: threads and bytes (null: every core, two thirds of the memory). */
export function configureIndexing(maxThreads: number | null, maxMemory: number | null): void {
  binding.configureIndexing(maxThreads, maxMemory);
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
