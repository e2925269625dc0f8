/** The search limiter on its own: slots, the bounded queue, dropping stale waiters. */
import { ApiError } from '../errors/api-error';
import { SearchLimiter } from './limiter';

function gate(): { promise: Promise<Buffer>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<Buffer>((resolve) => {
    open = () => resolve(Buffer.from('ok'));
  });
  return { promise, open };
}

describe('SearchLimiter', () => {
  it('when slots are free, then searches run at once, up to the concurrency', async () => {
    const l = new SearchLimiter(2, 10, 60_000);
    const a = gate();
    const b = gate();
    const c = gate();
    const started: string[] = [];
    const pa = l.run(() => {
      started.push('a');
      return a.promise;
    });
    const pb = l.run(() => {
      started.push('b');
      return b.promise;
    });
    const pc = l.run(() => {
      started.push('c');
      return c.promise;
    });
    await Promise.resolve();
    expect(started).toEqual(['a', 'b']);
    expect(l.load).toEqual({ active: 2, waiting: 1 });
    a.open();
    await pa;
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(['a', 'b', 'c']);
    b.open();
    c.open();
    await Promise.all([pb, pc]);
    expect(l.load).toEqual({ active: 0, waiting: 0 });
  });

  it('when the queue is full, then the search is refused with too_many_search_requests', async () => {
    const l = new SearchLimiter(1, 1, 60_000);
    const a = gate();
    const pa = l.run(() => a.promise);
    const pb = l.run(() => Promise.resolve(Buffer.from('b')));
    await expect(l.run(() => Promise.resolve(Buffer.from('c')))).rejects.toMatchObject({
      code: 'too_many_search_requests',
      message: 'Too many search requests running at the same time: 1. Retry after 10s.',
    });
    a.open();
    expect((await pb).toString()).toBe('b');
    await pa;
  });

  it('when a search waited longer than dropAfter, then it is dropped instead of run', async () => {
    let now = 0;
    const l = new SearchLimiter(1, 5, 1000, () => now);
    const a = gate();
    const pa = l.run(() => a.promise);
    let ran = false;
    const pb = l.run(async () => {
      ran = true;
      return Buffer.from('late');
    });
    now = 1500;
    a.open();
    await pa;
    await expect(pb).rejects.toBeInstanceOf(ApiError);
    expect(ran).toBe(false);
  });

  it('when a search fails, then its slot is released', async () => {
    const l = new SearchLimiter(1, 0, 60_000);
    await expect(l.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect((await l.run(() => Promise.resolve(Buffer.from('next')))).toString()).toBe('next');
  });

  it('when large searches fill their lane, then the other slots still start ordinary searches at once, and waiting ordinary searches go first', async () => {
    const l = new SearchLimiter(8, 20, 60_000);
    expect(l.largeSlots).toBe(2);
    const started: string[] = [];
    const gates = new Map<string, ReturnType<typeof gate>>();
    const run = (name: string, large: boolean) => {
      const g = gate();
      gates.set(name, g);
      return l.run(() => {
        started.push(name);
        return g.promise;
      }, large);
    };
    const big = ['L1', 'L2', 'L3', 'L4'].map((n) => run(n, true));
    await Promise.resolve();
    // Two of eight slots at most for large searches: the others wait for them.
    expect(started).toEqual(['L1', 'L2']);
    const small = ['s1', 's2', 's3', 's4', 's5', 's6'].map((n) => run(n, false));
    await Promise.resolve();
    expect(started).toEqual(['L1', 'L2', 's1', 's2', 's3', 's4', 's5', 's6']);
    // Every slot taken: the next ordinary search waits, and starts before the large ones.
    const waiting = run('s7', false);
    gates.get('L1')!.open();
    await big[0];
    await new Promise((r) => setImmediate(r));
    expect(started.slice(8)).toEqual(['s7']);
    gates.get('s1')!.open();
    await small[0];
    await new Promise((r) => setImmediate(r));
    expect(started.slice(8)).toEqual(['s7', 'L3']);
    for (const g of gates.values()) g.open();
    await Promise.all([...small, waiting, big[1], big[2]]);
    await new Promise((r) => setImmediate(r));
    for (const g of gates.values()) g.open();
    await Promise.all(big);
    expect(started.slice(8)).toEqual(['s7', 'L3', 'L4']);
    expect(l.load).toEqual({ active: 0, waiting: 0 });
  });
});
