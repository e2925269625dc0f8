/**
 * Why a JSON body is malformed, in the words and at the place Meilisearch's parser (serde_json)
 * gives: `EOF while parsing an object at line 1 column 1`, `trailing comma at line 3 column 2`.
 * JSON.parse says it otherwise (`Expected property name or '}' in JSON at position 1`), and
 * accepts what serde_json refuses (invalid UTF-8 inside a string, nesting 128 levels deep, a
 * lone surrogate escape, a number past f64). Clients show this message to their users, so a
 * body JSON.parse refused, or that may hold such things, is read again by the serde_json-worded
 * reader the tenant tokens use (`auth/token-json.ts`).
 */
import { isUtf8 } from 'node:buffer';
import { JsonError, JsonReader } from '../auth/token-json';

/** serde_json's message for `body`, or null when serde_json would read it. */
export function serdeJsonError(body: Buffer): string | null {
  const reader = new JsonReader(body);
  try {
    reader.value();
    reader.end();
    return null;
  } catch (err) {
    if (err instanceof JsonError) return err.message;
    throw err;
  }
}

/** Whether serde_json would refuse `body`'s bytes although JSON.parse read its text. */
export function refusedBytes(body: Buffer): boolean {
  return !isUtf8(body);
}
