/**
 * Giving memory back after a burst of large answers. Measured on 100,000 documents after 150
 * answers of 13 MB each, with the server idle: two things kept the peak resident.
 *
 * - The answers' Buffers, garbage once sent, waited for a garbage collection, and an idle
 *   server collects nothing: the copies in Node's heap (glibc's) and the engine's bytes behind
 *   them (mimalloc's). A full collection freed the first at once (glibc trims its heap itself).
 * - mimalloc kept the pages those bytes were freed from until later allocations walked past
 *   them: `releaseFreeMemory` (the engine's `memory::release_free_memory`) purges them.
 *
 * So, once a burst is over, `releaseAfterBurst` runs a full collection, lets the engine's
 * Buffers' finalizers run (they are deferred to the event loop), and asks the allocator to
 * release. A full collection stops the event loop for a few milliseconds; it runs only after
 * answers holding at least `RELEASE_AFTER_BYTES` together were all sent, at most once a second.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { releaseFreeMemory } from '../native';

/** Answers in flight together past which their end is followed by a release. */
export const RELEASE_AFTER_BYTES = 64 * 1024 ** 2;

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

/**
 * Returns `onDrained` for a `ResponseBudget`: after a drain of at least
 * `RELEASE_AFTER_BYTES`, waits a second; if answers are still in flight then (`busy()`), the
 * next drain tries again, else memory is released.
 */
export function releaseAfterBurst(busy: () => boolean, onError: (err: unknown) => void): (highest: number) => void {
  let pending = false;
  let scheduled = false;
  const release = async () => {
    scheduled = false;
    if (busy()) return;
    pending = false;
    collectGarbage();
    // The engine's Buffers are freed by finalizers the collection queued on the event loop.
    await new Promise((r) => setTimeout(r, 50).unref());
    await releaseFreeMemory();
  };
  return (highest) => {
    if (highest >= RELEASE_AFTER_BYTES) pending = true;
    if (!pending || scheduled) return;
    scheduled = true;
    setTimeout(() => release().catch(onError), 1000).unref();
  };
}
