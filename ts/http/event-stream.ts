/**
 * A server-sent events answer (a chat completion's) held to the pace of its reader.
 *
 * `send` resolves once the event may be followed by another: at once while the response's
 * buffer has room, else when the socket drains. What produces the events awaits it, so a
 * client that reads slowly slows the producer down instead of letting events pile up in memory.
 * A reader that takes nothing for `stallMs` (no drain; `--experimental-chat-stall-timeout-ms`,
 * default 60 s) is cut: the response is destroyed, `send` resolves false and the producer
 * stops; it is logged.
 *
 * The bytes of each event are held in the response budget (`response-budget.ts`) from its write
 * until the socket has taken them (the write's callback) or the response closes, so a stream's
 * buffered events count against the searches and streams that come after it; a new stream is
 * refused before it starts while the budget is spent (`refuseWhenFull`, in the route).
 *
 * The socket's idle timeout stays off: a model that thinks for a while is not an idle client.
 * A stall is measured only while an event waits for the reader.
 */
import type { Response } from 'express';
import type { ResponseBudget } from './response-budget';
import type { Logger } from '../logging';

export class EventStream {
  /** The budget holds of the events written and not yet taken by the socket. */
  private readonly waiting = new Set<() => void>();

  constructor(
    private readonly res: Response,
    private readonly budget: ResponseBudget,
    private readonly stallMs: number,
    private readonly logger: Logger,
  ) {
    res.once('close', () => {
      for (const release of this.waiting) release();
      this.waiting.clear();
    });
  }

  /** Sends the headers Meilisearch sends (no proxy buffering) and the reconnection delay. */
  async open(): Promise<boolean> {
    const res = this.res;
    res.socket?.setTimeout(0);
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream');
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('Content-Encoding', 'identity');
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    return this.write('retry: 10000\n\n');
  }

  /** Sends one event (`[DONE]` as is, anything else as JSON); false once the client is gone or cut. */
  send(data: unknown): Promise<boolean> {
    return this.write(`data: ${data === '[DONE]' ? '[DONE]' : JSON.stringify(data)}\n\n`);
  }

  end(): void {
    if (!this.res.destroyed && !this.res.writableEnded) this.res.end();
  }

  private async write(text: string): Promise<boolean> {
    const res = this.res;
    if (res.destroyed || res.writableEnded) return false;
    const bytes = Buffer.from(text);
    const release = this.budget.hold(bytes.length);
    const taken = () => {
      release();
      this.waiting.delete(taken);
    };
    this.waiting.add(taken);
    if (res.write(bytes, taken)) return true;
    return this.drained();
  }

  /** Waits for the buffered events to be taken; true when they were, false when the stream closed or was cut. */
  private drained(): Promise<boolean> {
    const res = this.res;
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        res.off('drain', onDrain);
        res.off('close', onClose);
        resolve(ok);
      };
      const onDrain = () => done(true);
      const onClose = () => done(false);
      const timer = setTimeout(() => {
        this.logger.warn('chat stream cut: its client took nothing for the stall limit', {
          stallMs: this.stallMs,
          buffered: res.writableLength,
        });
        res.destroy();
        done(false);
      }, this.stallMs);
      res.once('drain', onDrain);
      res.once('close', onClose);
    });
  }
}
