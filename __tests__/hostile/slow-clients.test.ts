/**
 * Slow and broken clients, on real sockets: a request whose headers trickle in a byte at a
 * time is answered 408 and closed; a client that stops reading a large answer is cut off once
 * its connection has been idle for the idle timeout (the server does not hold the answer for
 * ever); hundreds of idle keep-alive connections are closed the same way. Meanwhile another
 * client's searches are answered.
 */
import net from 'node:net';
import type { ChildProcess } from 'node:child_process';
import { CHILD_KEY, call, startChild, finishedTask } from '../helpers/child';
import { tempDir } from '../helpers/server';

jest.setTimeout(120_000);

let child: ChildProcess;
let url: string;
let port: number;

beforeAll(async () => {
  ({ child, url } = await startChild(tempDir('quarry-slow-'), [
    '--http-idle-timeout-secs',
    '2',
    '--http-headers-timeout-secs',
    '2',
  ]));
  port = Number(new URL(url).port);
  // 700 documents of about 100 KB each: a 70 MB answer, more than loopback's socket buffers
  // hold (their autotuned sizes reach 32 MB for reading and 4 MB for writing on some kernels).
  const docs = Array.from({ length: 700 }, (_, i) => ({
    id: i,
    title: `book ${i}`,
    text: `chapter ${i} `.repeat(9000),
  }));
  const r = await call(url, 'POST', '/indexes/books/documents', docs);
  const t = await finishedTask(url, r.body.taskUid);
  if (t.status !== 'succeeded') throw new Error(JSON.stringify(t.error));
});

afterAll(async () => {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A search from a well-behaved client: its hit count. */
async function search(): Promise<number> {
  const r = await call(url, 'POST', '/indexes/books/search', { q: 'book 7', limit: 1, attributesToRetrieve: ['id'] });
  expect(r.status).toBe(200);
  return r.body.hits.length;
}

/**
 * A raw connection, with what it received and when it closed. `stalled()` stops reading at the
 * socket itself (libuv stops reading; the kernel's buffers fill and the server's writes block)
 * until `resume()`.
 */
function connect(): Promise<{
  socket: net.Socket;
  received: () => string;
  closed: Promise<number>;
  stall: () => void;
  resume: () => void;
}> {
  return new Promise((resolve, reject) => {
    let data = '';
    let reading = true;
    let socket: net.Socket;
    const buffer = Buffer.alloc(64 * 1024);
    // Returning false from `onread` stops reading from the socket.
    socket = net.connect({
      port,
      host: '127.0.0.1',
      onread: {
        buffer,
        callback: (n: number, buf: Buffer) => {
          data += buf.toString('latin1', 0, n);
          return reading;
        },
      },
    });
    const t0 = Date.now();
    const closed = new Promise<number>((r) => socket.once('close', () => r(Date.now() - t0)));
    socket.on('error', () => undefined);
    socket.once('connect', () =>
      resolve({
        socket,
        received: () => data,
        closed,
        stall: () => {
          reading = false;
          socket.pause();
        },
        resume: () => {
          reading = true;
          socket.resume();
        },
      }),
    );
    socket.once('error', reject);
  });
}

test('a request whose headers trickle in is answered 408 and closed, while searches go on', async () => {
  const { socket, received, closed } = await connect();
  socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n');
  let trickling = true;
  const trickle = (async () => {
    for (let i = 0; trickling && !socket.destroyed; i++) {
      socket.write(`X-Slow-${i}: a\r\n`);
      await sleep(300);
    }
  })();
  for (let i = 0; i < 10; i++) {
    expect(await search()).toBe(1);
    await sleep(100);
  }
  const after = await Promise.race([closed, sleep(15_000).then(() => -1)]);
  trickling = false;
  await trickle;
  expect(after).toBeGreaterThan(0);
  const answer = received();
  expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({
    code: 'bad_request',
    type: 'invalid_request',
  });
});

test('a client that stops reading a large answer is cut off, and the server answers others meanwhile', async () => {
  const { socket, received, closed, stall, resume } = await connect();
  stall();
  socket.write(
    `GET /indexes/books/documents?limit=700 HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${CHILD_KEY}\r\n\r\n`,
  );
  // Ten seconds without reading: the answer takes a few to build, then fills the buffers,
  // then the connection sits idle past the 2 s timeout.
  for (let i = 0; i < 10; i++) {
    expect(await search()).toBe(1);
    await sleep(1000);
  }
  // Reading again, long after the idle timeout: the answer stops short of its length.
  resume();
  await Promise.race([closed, sleep(15_000)]);
  const answer = received();
  const body = answer.slice(answer.indexOf('\r\n\r\n') + 4);
  expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  expect(body.length).toBeGreaterThan(0);
  // What a client that reads gets: the whole answer.
  const whole = await fetch(`${url}/indexes/books/documents?limit=700`, {
    headers: { Authorization: `Bearer ${CHILD_KEY}` },
  });
  expect(body.length).toBeLessThan((await whole.arrayBuffer()).byteLength);
  expect(socket.destroyed || socket.readableEnded).toBe(true);
});

test('hundreds of idle keep-alive connections are closed after the idle timeout, and searches are answered meanwhile', async () => {
  const conns = await Promise.all(Array.from({ length: 300 }, () => connect()));
  for (const c of conns) c.socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n');
  for (let i = 0; i < 10; i++) expect(await search()).toBe(1);
  const times = await Promise.all(conns.map((c) => Promise.race([c.closed, sleep(20_000).then(() => -1)])));
  expect(times.filter((t) => t < 0)).toEqual([]);
  for (const c of conns) expect(c.received()).toMatch(/^HTTP\/1\.1 200 /);
  expect(await search()).toBe(1);
});
