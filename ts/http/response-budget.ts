/**
 * The byte budget of answers in flight (`--experimental-search-response-budget`): searches,
 * multi-searches and document fetches can each answer tens of megabytes (every hit of a
 * 100,000-document index once `maxTotalHits` is raised), and an answer's bytes stay in memory
 * from the moment the engine returns them until the socket has taken the last of them. Fifty
 * such answers at once held 1.5 GiB.
 *
 * An answer whose size is known (the engine's JSON bytes) reserves that many bytes before it
 * is sent and gives them back when its response ends, written out or broken off (`close`).
 * When the reservation would take the bytes in flight past the budget, the request is refused
 * with 503 `too_many_search_requests` and `Retry-After: 10` (the search limiter's refusal) and
 * its bytes are dropped at once. One answer is always let through when nothing else is in
 * flight, whatever its size: otherwise an answer larger than the budget could never be sent.
 *
 * A streamed answer (a chat completion's server-sent events) cannot know its size ahead: each
 * event's bytes are held (`hold`, never refused) from the moment it is written until the socket
 * has taken it, and a new stream is refused before it starts while the budget is spent
 * (`http/event-stream.ts`).
 *
 * So the answers being sent hold at most the budget, or one answer alone (plus, for a stream
 * started before the budget was spent, the one event it is writing). Answers being built
 * are not counted until they exist; the search limiter bounds how many searches run at once
 * (`--experimental-nb-searches-per-core` × cores), so memory peaks at about the budget plus
 * that many answers being built (plus one answer larger than the budget, alone).
 *
 * Design: the bytes are counted after the engine built them rather than estimated before,
 * because only then is the size known (a search's size depends on its hits' documents). While
 * the budget is spent, requests are refused before they are built (`refuseWhenFull`, called
 * by the search service and the document fetches), so a burst costs little beyond the answers
 * it is sending.
 */
import type { ServerResponse } from 'node:http';
import { ApiError } from '../errors/api-error';

export class ResponseBudget {
  private held = 0;
  /** Bytes reserved since the bytes in flight were last zero. */
  private burst = 0;

  /**
   * `limit`: the budget in bytes, 0 for none. `onDrained(total)` is called each time the
   * bytes in flight fall back to zero, with the bytes of every answer held since the last
   * call: the moment to give memory back after a burst. `onReleased(bytes)` is called as each answer's
   * bytes are given back: they are garbage from then on.
   */
  constructor(
    readonly limit: number,
    private readonly onDrained: (total: number) => void = () => undefined,
    private readonly onReleased: (bytes: number) => void = () => undefined,
  ) {}

  /**
   * Reserves `bytes` and returns the function that gives them back (once, however often it is
   * called); throws `too_many_search_requests` when the budget cannot take them.
   */
  reserve(bytes: number): () => void {
    if (this.limit > 0 && this.held > 0 && this.held + bytes > this.limit) throw this.refusal();
    return this.hold(bytes);
  }

  /**
   * Counts `bytes` whatever the budget holds, and returns the function that gives them back
   * (once). For bytes already committed to a response that has started, such as the events
   * waiting in a chat stream's buffer: they cannot be refused, but they count against the
   * requests that come after them (`refuseWhenFull`).
   */
  hold(bytes: number): () => void {
    this.held += bytes;
    this.burst += bytes;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.held -= bytes;
      this.onReleased(bytes);
      if (this.held === 0) {
        const total = this.burst;
        this.burst = 0;
        this.onDrained(total);
      }
    };
  }

  /**
   * Throws `too_many_search_requests` when the budget is already spent, so that a search or
   * fetch is refused before it is built rather than after (any answer would then be refused).
   */
  refuseWhenFull(): void {
    if (this.limit > 0 && this.held >= this.limit) throw this.refusal();
  }

  private refusal(): ApiError {
    return new ApiError(
      'too_many_search_requests',
      `Too many search answers being sent at the same time: together they would hold more than the response budget of ${this.limit} bytes. Retry after 10s.`,
    );
  }

  /**
   * Holds `bytes` until `res` has ended (sent or closed); throws as `reserve` does. A response
   * whose connection already closed holds nothing: its answer is never sent.
   */
  holdFor(res: ServerResponse, bytes: number): void {
    if (res.destroyed || res.writableEnded) return;
    const release = this.reserve(bytes);
    res.once('finish', release);
    res.once('close', release);
  }

  /** Bytes in flight now, for tests and metrics. */
  get inFlight(): number {
    return this.held;
  }
}
