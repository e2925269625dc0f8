/**
 * The search preview page served at `GET /`: one HTML document assembled at start-up from
 * the files of `preview/` at the package root (the HTML shell, its script and its style).
 * It owns the page's bytes and its security headers; it does not know the API (the page calls
 * the public routes like any client, with the key the user gives it).
 *
 * Design decision: the script and the style are inlined into the one document and allowed by
 * their SHA-256 hashes in the Content-Security-Policy. The page costs one request, needs no
 * asset routes beside the API's, and the policy still allows no other script or style at
 * all (no `'unsafe-inline'`), so an injected tag in a document could not run.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** The page and the headers it must be served with. */
export interface PreviewPage {
  html: Buffer;
  headers: Record<string, string>;
}

/**
 * `preview/` beside `ts/` (tests run from sources) and beside `dist/` (the build): both sit
 * one level below the package root, so the same relative path serves both.
 */
export const PREVIEW_DIR = path.resolve(__dirname, '..', '..', 'preview');

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

function inline(shell: string, marker: string, content: string, closing: string): string {
  // The content ends the element if it holds its closing tag; refuse rather than break the page.
  if (content.toLowerCase().includes(closing)) throw new Error(`preview: the inlined content holds \`${closing}\``);
  if (!shell.includes(marker)) throw new Error(`preview: index.html has no \`${marker}\``);
  return shell.replace(marker, () => content);
}

/** Reads and assembles the page (once, at start-up); throws when its files are missing. */
export function loadPreviewPage(dir = PREVIEW_DIR): PreviewPage {
  const read = (name: string) => fs.readFileSync(path.join(dir, name), 'utf8');
  const script = read('preview.js');
  const style = read('preview.css');
  const html = inline(inline(read('index.html'), '/*SCRIPT*/', script, '</script'), '/*STYLE*/', style, '</style');
  const csp = [
    "default-src 'none'",
    `script-src ${sha256(script)}`,
    `style-src ${sha256(style)}`,
    "connect-src 'self'",
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return {
    html: Buffer.from(html, 'utf8'),
    headers: {
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': csp,
      'X-Content-Type-Options': 'nosniff',
      'X-Frame-Options': 'DENY',
      'Referrer-Policy': 'no-referrer',
      'Cache-Control': 'no-cache',
    },
  };
}
