/**
 * Follows one stream of the log from a cursor, for as long as it runs: the receiver reads the
 * entries through one, the batches' planner the batches through another.
 *
 * A read that fails (no server, no stream leader) starts again from the cursor after a pause
 * that doubles up to two seconds. A reader can also be left waiting without failing (a
 * consumer on a stream that lost and regained its leader): told the stream's last sequence
 * every second (`nudge`, from the health probe), a reader that has not moved for 3 s while the
 * stream holds more starts again from the cursor.
 */
import type { Logger } from '../logging';
import { describe, type LogName, type NatsLog, type StoredMessage } from './nats';

export interface ReaderOptions {
  log: NatsLog;
  which: LogName;
  logger: Logger;
  /** The first sequence still to read (the cursor plus one). */
  next: () => number;
  /** The last sequence this reader's owner has (applied, or known and waiting to run). */
  seen: () => number;
  /** Handles one message in order; false stops the reader for good. */
  handle: (m: StoredMessage) => Promise<boolean>;
}

export class StreamReader {
  #stop: (() => void) | null = null;
  #stopped = false;
  #loop: Promise<void> | null = null;
  #progress = Date.now();

  constructor(private readonly o: ReaderOptions) {}

  start(): void {
    this.#loop ??= this.#run();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#stop?.();
    await this.#loop;
  }

  nudge(lastSeq: number): void {
    if (lastSeq <= this.o.seen()) {
      this.#progress = Date.now();
    } else if (Date.now() - this.#progress > 3000) {
      this.#progress = Date.now();
      this.o.logger.warn(`replication: reading the ${this.o.which} again`, { from: this.o.next(), last: lastSeq });
      this.#stop?.();
    }
  }

  async #run(): Promise<void> {
    let backoff = 100;
    let going = true;
    while (!this.#stopped && going) {
      try {
        const { messages, stop } = await this.o.log.read(this.o.which, this.o.next());
        this.#stop = stop;
        if (this.#stopped) stop();
        for await (const m of messages) {
          if (this.#stopped) break;
          if (m.seq < this.o.next()) continue;
          going = await this.o.handle(m);
          this.#progress = Date.now();
          backoff = 100;
          if (!going) break;
        }
      } catch (err) {
        if (this.#stopped) break;
        this.o.logger.warn(`replication: reading the ${this.o.which} failed, retrying`, {
          error: describe(err),
          next: this.o.next(),
        });
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(backoff * 2, 2000);
      } finally {
        this.#stop?.();
        this.#stop = null;
      }
    }
  }
}
