/** The response budget on its own: reservations, the lone answer, releases and drains. */
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { ApiError } from '../errors/api-error';
import { ResponseBudget } from './response-budget';

/** What `holdFor` reads of a response. */
function response(): ServerResponse & EventEmitter {
  return Object.assign(new EventEmitter(), { destroyed: false, writableEnded: false }) as unknown as ServerResponse &
    EventEmitter;
}

describe('ResponseBudget', () => {
  it('when answers fit, then they are all held; past the budget the next is refused with too_many_search_requests', () => {
    const b = new ResponseBudget(100);
    b.reserve(40);
    b.reserve(60);
    expect(b.inFlight).toBe(100);
    expect(() => b.reserve(1)).toThrow(expect.objectContaining({ code: 'too_many_search_requests' }));
    expect(() => b.reserve(1)).toThrow(ApiError);
    expect(b.inFlight).toBe(100);
  });

  it('when nothing is in flight, then one answer larger than the budget is held, and nothing else beside it', () => {
    const b = new ResponseBudget(100);
    const release = b.reserve(1000);
    expect(() => b.reserve(1)).toThrow(expect.objectContaining({ code: 'too_many_search_requests' }));
    release();
    expect(b.inFlight).toBe(0);
    b.reserve(10);
  });

  it('when the budget is spent, then refuseWhenFull refuses; below it, or with one answer under it, it does not', () => {
    const b = new ResponseBudget(100);
    b.refuseWhenFull();
    const release = b.reserve(60);
    b.refuseWhenFull();
    const more = b.reserve(40);
    expect(() => b.refuseWhenFull()).toThrow(expect.objectContaining({ code: 'too_many_search_requests' }));
    more();
    release();
    new ResponseBudget(0).refuseWhenFull();
  });

  it('when bytes are held past the budget, then the hold is not refused, but refuseWhenFull and reserve refuse until it is given back', () => {
    const b = new ResponseBudget(100);
    const keep = b.reserve(30);
    const held = b.hold(500);
    expect(b.inFlight).toBe(530);
    expect(() => b.refuseWhenFull()).toThrow(expect.objectContaining({ code: 'too_many_search_requests' }));
    expect(() => b.reserve(1)).toThrow(expect.objectContaining({ code: 'too_many_search_requests' }));
    held();
    held();
    expect(b.inFlight).toBe(30);
    b.refuseWhenFull();
    keep();
  });

  it('when a release is called twice, then its bytes are given back once', () => {
    const b = new ResponseBudget(100);
    const keep = b.reserve(30);
    const release = b.reserve(50);
    release();
    release();
    expect(b.inFlight).toBe(30);
    keep();
  });

  it('when the budget is 0, then nothing is refused', () => {
    const b = new ResponseBudget(0);
    for (let i = 0; i < 10; i++) b.reserve(1e9);
    expect(b.inFlight).toBe(1e10);
  });

  it('when the bytes in flight fall back to zero, then onDrained gets the bytes of every answer held since the last drain', () => {
    const drains: number[] = [];
    const b = new ResponseBudget(0, (h) => drains.push(h));
    const a = b.reserve(10);
    const c = b.reserve(20);
    a();
    const d = b.reserve(40);
    c();
    expect(drains).toEqual([]);
    d();
    b.reserve(5)();
    expect(drains).toEqual([70, 5]);
  });

  it('when a held response finishes or closes, then its bytes are given back once; a closed one holds nothing', () => {
    const b = new ResponseBudget(100);
    const sent = response();
    b.holdFor(sent, 60);
    expect(b.inFlight).toBe(60);
    sent.emit('finish');
    sent.emit('close');
    expect(b.inFlight).toBe(0);

    const broken = response();
    b.holdFor(broken, 70);
    broken.emit('close');
    expect(b.inFlight).toBe(0);

    const gone = Object.assign(response(), { destroyed: true });
    b.holdFor(gone, 70);
    expect(b.inFlight).toBe(0);
  });
});
