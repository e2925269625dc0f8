/**
 * The request path first, when the server shares a small machine with its own background
 * threads (Linux only; elsewhere nothing changes).
 *
 * Node's V8 runs its optimizing compiler and parts of its garbage collector on a few platform
 * threads, and during a server's first thousands of requests they compile for up to 3 ms at a
 * time. On two cores, a scheduler trace (`perf sched timehist`) of `bench/run.js` showed the
 * JavaScript thread woken by a finished search, runnable but waiting 3.2 ms behind one of them
 * on its core while the other core sat idle: the answer was ready and not written. So, once,
 * before anything else starts a thread:
 * - the threads the process already has (V8's platform threads; the libuv pool, which runs the
 *   searches and batches, starts later) get a nice value 10 higher (`lowerOtherThreads`), so that
 *   they run in the time the request path leaves;
 * - the JavaScript thread gets a short scheduler slice (`shortenSlice`), so that it preempts
 *   such a thread as soon as it wakes.
 *
 * `__tests__/system/threads.test.ts` checks both on a running server. Only the server's process
 * entry calls this: a Node application embedding the engine keeps its threads as they are.
 */
import { shortenSlice } from '../native';
import { lowerOtherThreads } from '../util/threads';

export function favourRequestThreads(): void {
  lowerOtherThreads();
  shortenSlice();
}
