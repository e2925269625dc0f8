/**
 * Bounded search concurrency: at most `concurrency` searches run at once, at most `queueSize`
 * wait, and a search that waited longer than `dropAfterMs` is dropped. When the queue is full
 * the request is refused at once with 503 `too_many_search_requests` (and `Retry-After: 10`),
 * so a flood of searches cannot queue without limit or starve indexing of the libuv pool.
 *
 * Two lanes. A search asking for a page beyond `LARGE_PAGE` hits (possible only where an
 * index's `maxTotalHits` was raised) builds an answer of megabytes and holds a slot for its
 * whole time: at most `largeSlots` of them run at once (a quarter of the slots, at least one),
 * and a waiting search of the ordinary lane starts before any waiting large one. A burst of
 * worst-case searches then queues behind itself, not in front of a search box's queries, and
 * the answers being built at once are bounded by that count, whatever the clients ask.
 */
import { ApiError } from '../errors/api-error';

/** Hits asked for (offset + limit, or page × hitsPerPage) past which a search is large. */
export const LARGE_PAGE = 1000;

interface Waiter {
  start: () => void;
  fail: (err: Error) => void;
  enqueuedAt: number;
}

export class SearchLimiter {
  private active = 0;
  private activeLarge = 0;
  private readonly waiting: Waiter[] = [];
  private readonly waitingLarge: Waiter[] = [];
  /** Slots that large searches may take at once. */
  readonly largeSlots: number;

  constructor(
    readonly concurrency: number,
    readonly queueSize: number,
    readonly dropAfterMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.largeSlots = Math.max(1, Math.floor(concurrency / 4));
  }

  private tooMany(): ApiError {
    return new ApiError(
      'too_many_search_requests',
      `Too many search requests running at the same time: ${this.queueSize}. Retry after 10s.`,
    );
  }

  private canStart(large: boolean): boolean {
    return this.active < this.concurrency && (!large || this.activeLarge < this.largeSlots);
  }

  /**
   * Runs `fn` when a slot is free (`large`: a search for a page beyond `LARGE_PAGE` hits);
   * throws `too_many_search_requests` when it can't wait.
   */
  async run<T>(fn: () => Promise<T>, large = false): Promise<T> {
    const lane = large ? this.waitingLarge : this.waiting;
    if (!this.canStart(large) || lane.length > 0) {
      if (this.waiting.length + this.waitingLarge.length >= this.queueSize) throw this.tooMany();
      // `next` takes the slot for it before it resumes.
      await new Promise<void>((start, fail) => lane.push({ start, fail, enqueuedAt: this.now() }));
    } else {
      this.take(large);
    }
    try {
      return await fn();
    } finally {
      this.active -= 1;
      if (large) this.activeLarge -= 1;
      this.next();
    }
  }

  private take(large: boolean): void {
    this.active += 1;
    if (large) this.activeLarge += 1;
  }

  /** Starts what may start now: the ordinary lane first. */
  private next(): void {
    for (const [lane, large] of [
      [this.waiting, false],
      [this.waitingLarge, true],
    ] as const) {
      while (lane.length > 0 && this.canStart(large)) {
        const w = lane.shift()!;
        if (this.now() - w.enqueuedAt > this.dropAfterMs) {
          w.fail(this.tooMany());
          continue;
        }
        this.take(large);
        w.start();
      }
    }
  }

  /** Searches running and waiting, for tests and metrics. */
  get load(): { active: number; waiting: number } {
    return { active: this.active, waiting: this.waiting.length + this.waitingLarge.length };
  }
}
