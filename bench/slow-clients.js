#!/usr/bin/env node
/**
 * Slow and broken clients (issue 71): a normal client's search latency while others misbehave.
 * One Quarry instance holds --rows rows of the npm catalogue; a client searches fresh one-word
 * queries one at a time for --seconds in each phase, timing each answer:
 *
 *   idle        nobody else
 *   slowloris   --slowloris connections trickling header lines (one every 200 ms each; the
 *               headers timeout, 10 s, closes them within the phase)
 *   stalled     --stalled clients asking for 1,000 documents each and never reading the answer
 *   keepalive   --idle connections that sent one request and sit on the open connection
 *
 *   node bench/slow-clients.js [--rows 100000] [--seconds 15] [--slowloris 500] [--stalled 50] [--idle 2000]
 *
 * Prints p50/p99 per phase and the server's RSS at the end of each. No assertions: it reports.
 */
'use strict';
const net = require('node:net');
const { client, discardQuarry, loadIndex, loadRows, rssOf, startQuarry } = require('./server');

function parseArgs(argv) {
  const o = { rows: 100000, seconds: 15, slowloris: 500, stalled: 50, idle: 2000 };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    if (!(key in o)) throw new Error(`unknown option ${argv[i]}`);
    o[key] = Number(argv[i + 1]);
  }
  return o;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};

/** A raw connection to the server that never reads (libuv stops reading at once). */
function rawSocket(port, reading) {
  return new Promise((resolve) => {
    const socket = net.connect({
      port,
      host: '127.0.0.1',
      onread: { buffer: Buffer.alloc(16 * 1024), callback: () => reading },
    });
    socket.on('error', () => undefined);
    socket.once('connect', () => resolve(socket));
  });
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const { docs } = await loadRows('npm', o.rows);
  const q = await startQuarry();
  const api = client(q.url, q.key);
  const port = Number(new URL(q.url).port);
  await loadIndex(api, 'bench', docs, 'npm');
  const words = [
    ...new Set(
      docs
        .flatMap((d) =>
          String(d.summary)
            .toLowerCase()
            .split(/[^a-z]+/),
        )
        .filter((w) => w.length > 3),
    ),
  ];
  let next = 0;
  const measure = async () => {
    const times = [];
    const end = performance.now() + o.seconds * 1000;
    while (performance.now() < end) {
      const t0 = performance.now();
      await api('POST', '/indexes/bench/search', JSON.stringify({ q: words[next++ % words.length] }));
      times.push(performance.now() - t0);
    }
    return {
      searches: times.length,
      p50: Number(pct(times, 50).toFixed(2)),
      p99: Number(pct(times, 99).toFixed(2)),
      rssMiB: Math.round(rssOf(q.pid).now / 2 ** 20),
    };
  };
  const out = { rows: docs.length };
  out.idle = await measure();

  // Header trickles.
  const loris = await Promise.all(Array.from({ length: o.slowloris }, () => rawSocket(port, true)));
  for (const s of loris) s.write('GET /health HTTP/1.1\r\nHost: localhost\r\n');
  let trickling = true;
  const trickle = (async () => {
    for (let i = 0; trickling; i++) {
      for (const s of loris) if (!s.destroyed) s.write(`X-${i}: a\r\n`);
      await sleep(200);
    }
  })();
  out.slowloris = await measure();
  trickling = false;
  await trickle;
  out.slowloris.closedByServer = loris.filter((s) => s.destroyed || s.readableEnded).length;
  for (const s of loris) s.destroy();

  // Readers that stop reading large answers.
  const stalled = await Promise.all(Array.from({ length: o.stalled }, () => rawSocket(port, false)));
  for (const s of stalled)
    s.write(
      `GET /indexes/bench/documents?limit=1000 HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${q.key}\r\n\r\n`,
    );
  out.stalled = await measure();
  for (const s of stalled) s.destroy();

  // Idle keep-alive connections.
  const idle = await Promise.all(Array.from({ length: o.idle }, () => rawSocket(port, true)));
  for (const s of idle) s.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n');
  out.keepalive = await measure();
  for (const s of idle) s.destroy();

  await discardQuarry(q);
  console.log(JSON.stringify(out, null, 1));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
