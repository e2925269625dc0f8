/**
 * Memory of large answers once they are sent. Measured on 100,000 documents after 150 answers
 * of 13 MB each, with the server idle: two things kept the peak resident.
 *
 * - The answers' Buffers, garbage once sent, waited for a garbage collection, and an idle
 *   server collects nothing: the copies in Node's heap (glibc's) and the engine's bytes behind
 *   them (mimalloc's). A full collection freed the first at once (glibc trims its heap itself).
 * - mimalloc kept the pages those bytes were freed from until later allocations walked past
 *   them, and glibc the free pages in the middle of its arenas: `releaseFreeMemory` (the
 *   engine's `memory::release_free_memory`) purges both.
 *
 * So, once a burst is over, `releaseAfterBurst` runs a full collection, lets the engine's
 * Buffers' finalizers run (they are deferred to the event loop), and asks the allocator to
 * release. A full collection stops the event loop for a few milliseconds; it runs only once
 * answers totalling at least `RELEASE_AFTER_BYTES` were sent since the last release, a second
 * after a drain with nothing in flight, at most once a second.
 *
 * During a burst, V8 collects on its own schedule, and sent answers piled up as garbage
 * meanwhile (most of the peak: the answers in flight were a small part of it). So
 * `collectAfterSent` also runs a full collection each time large answers (of 1 MiB or more)
 * totalling `COLLECT_AFTER_BYTES` were sent since the last: garbage of sent answers stays
 * under about that much.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { releaseFreeMemory } from '../native';

/** Bytes of answers sent in one burst past which its end is followed by a release. */
export const RELEASE_AFTER_BYTES = 64 * 1024 ** 2;

/** Bytes of large answers sent between two collections at most (see the module doc). */
export const COLLECT_AFTER_BYTES = 64 * 1024 ** 2;

/** Answers smaller than this are left to V8's own collections. */
const LARGE_ANSWER = 1024 ** 2;

let collect: (() => void) | undefined;

/** A full garbage collection (V8's `gc`, exposed on first use). */
function collectGarbage(): void {
  if (collect === undefined) {
    const exposed = (globalThis as { gc?: () => void }).gc;
    if (typeof exposed === 'function') collect = exposed;
    else {
      v8.setFlagsFromString('--expose-gc');
      collect = vm.runInNewContext('gc') as () => void;
    }
  }
  collect();
}

/** How long after answers drained memory is released (if none are in flight then). */
const AFTER_MS = 1000;

/**
 * Returns `onDrained` for a `ResponseBudget`: once answers totalling `RELEASE_AFTER_BYTES` were
 * sent since the last release, memory is released a second after a drain, when no answer is in
 * flight then (`busy()`), else a second later; and once more after the last answers of the
 * burst (less than that since the release before). The bytes are counted across drains:
 * answers sent one after another (the large-search lane runs few at once) drain between each
 * other. So during a long burst memory is released at most once a second.
 */
export function releaseAfterBurst(busy: () => boolean, onError: (err: unknown) => void): (total: number) => void {
  let sent = 0;
  let armed = false;
  let scheduled = false;
  const release = async () => {
    collectGarbage();
    // The engine's Buffers are freed by finalizers the collection queued on the event loop.
    await new Promise((r) => setTimeout(r, 50).unref());
    await releaseFreeMemory();
  };
  const check = () => {
    scheduled = false;
    if (busy()) return schedule();
    // The burst is over once less than the threshold was sent since the last release.
    if (sent < RELEASE_AFTER_BYTES) armed = false;
    sent = 0;
    release().catch(onError);
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setTimeout(check, AFTER_MS).unref();
  };
  return (total) => {
    sent += total;
    if (sent >= RELEASE_AFTER_BYTES) armed = true;
    if (armed) schedule();
  };
}

/**
 * Returns `onReleased` for a `ResponseBudget`: counts the bytes of large answers sent, and
 * once they reach `COLLECT_AFTER_BYTES`, runs a full collection on the next turn of the event
 * loop (not inside the socket's callback).
 */
export function collectAfterSent(): (bytes: number) => void {
  let sent = 0;
  return (bytes) => {
    if (bytes < LARGE_ANSWER) return;
    sent += bytes;
    if (sent < COLLECT_AFTER_BYTES) return;
    sent = 0;
    setImmediate(collectGarbage);
  };
}
