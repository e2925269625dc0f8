/**
 * Bounded search concurrency: at most `concurrency` searches run at once, at most `queueSize`
 * wait, and a search that waited longer than `dropAfterMs` is dropped. When the queue is full
 * the request is refused at once with 503 `too_many_search_requests` (and `Retry-After: 10`),
 * so a flood of searches cannot queue without limit or starve indexing of the libuv pool.
 */
import { ApiError } from '../errors/api-error';

interface Waiter {
  start: () => void;
  fail: (err: Error) => void;
  enqueuedAt: number;
}

export class SearchLimiter {
  private active = 0;
  private readonly waiting: Waiter[] = [];

  constructor(
    readonly concurrency: number,
    readonly queueSize: number,
    readonly dropAfterMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  private tooMany(): ApiError {
    return new ApiError('too_many_search_requests', `Too many search requests running at the same time: ${this.queueSize}. Retry after 10s.`);
  }

  /** Runs `fn` when a slot is free; throws `too_many_search_requests` when it can't wait. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.concurrency) {
      if (this.waiting.length >= this.queueSize) throw this.tooMany();
      await new Promise<void>((start, fail) => this.waiting.push({ start, fail, enqueuedAt: this.now() }));
    }
    this.active += 1;
    try {
      return await fn();
    } finally {
      this.active -= 1;
      this.next();
    }
  }

  private next(): void {
    while (this.waiting.length > 0 && this.active < this.concurrency) {
      const w = this.waiting.shift()!;
      if (this.now() - w.enqueuedAt > this.dropAfterMs) {
        w.fail(this.tooMany());
        continue;
      }
      w.start();
      return;
    }
  }

  /** Searches running and waiting, for tests and metrics. */
  get load(): { active: number; waiting: number } {
    return { active: this.active, waiting: this.waiting.length };
  }
}
