/**
 * Lowers the priority of every thread of this process but the JavaScript thread (Linux only;
 * elsewhere nothing changes). Called first thing, before the libuv pool starts, the threads it
 * finds are V8's platform threads: its optimizing compiler and parts of its garbage collector.
 * The server's process entry uses it (`ts/startup/threads.ts`), and so does the bench's
 * client (`bench/lib.js`), which is a Node process too. No addon here: the bench loads this
 * without the engine.
 */
import fs from 'node:fs';
import os from 'node:os';

/** How much lower V8's background threads run (nice values, capped at 19). */
const BACKGROUND_NICE = 10;

export function lowerOtherThreads(): void {
  if (process.platform !== 'linux') return;
  let tids: number[];
  try {
    tids = fs.readdirSync('/proc/self/task').map(Number);
  } catch {
    return;
  }
  for (const tid of tids) {
    if (tid === process.pid || !Number.isInteger(tid)) continue;
    try {
      os.setPriority(tid, Math.min(19, os.getPriority(tid) + BACKGROUND_NICE));
    } catch {
      // The thread ended meanwhile, or the system refuses: it keeps its priority.
    }
  }
}
