/**
 * HTTPS: real child servers with throwaway certificates made by the openssl CLI at test time
 * (a CA for the server, one for clients and an unrelated one), queried over TLS with the CA
 * trusted. Mutual TLS, optional client certificates, session resumption, tickets and OCSP
 * stapling are checked on the handshake itself.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { type Child, failedStart, startQuarry } from './spawn';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-tls-'));
const f = (name: string) => path.join(dir, name);

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
}

/** A CA, and a certificate it signs (with the given subjectAltName, if any). */
function makeCa(name: string): void {
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    `${name}-ca.key`,
    '-out',
    `${name}-ca.pem`,
    '-days',
    '2',
    '-subj',
    `/CN=${name} test CA`,
  );
}
function makeLeaf(name: string, ca: string, san: string | null): void {
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.csr`,
    '-subj',
    `/CN=${name}`,
  );
  const ext = san ? ['-extfile', `${name}.ext`] : [];
  if (san) fs.writeFileSync(f(`${name}.ext`), `subjectAltName=${san}\n`);
  openssl(
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${ca}-ca.pem`,
    '-CAkey',
    `${ca}-ca.key`,
    '-CAcreateserial',
    '-out',
    `${name}.pem`,
    '-days',
    '2',
    ...ext,
  );
}

beforeAll(() => {
  makeCa('server');
  makeLeaf('localhost', 'server', 'IP:127.0.0.1,DNS:localhost');
  makeCa('client');
  makeLeaf('alice', 'client', null);
  makeCa('rogue');
  makeLeaf('mallory', 'rogue', null);
  fs.writeFileSync(f('ocsp.der'), Buffer.from('30030a0100', 'hex'));
});

const children: Child[] = [];
afterAll(async () => {
  await Promise.all(children.map((c) => c.stop()));
  fs.rmSync(dir, { recursive: true, force: true });
});

async function start(extra: string[]): Promise<Child> {
  const db = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-tls-db-'));
  const c = await startQuarry([
    '--db-path',
    db,
    '--http-addr',
    '127.0.0.1:0',
    '--master-key',
    'tls-master-key-0123456789',
    '--no-analytics',
    '--ssl-cert-path',
    f('localhost.pem'),
    '--ssl-key-path',
    f('localhost.key'),
    ...extra,
  ]);
  children.push(c);
  return c;
}

/** GET over HTTPS trusting the server CA; resolves the status, or the error's code/message. */
function get(
  url: string,
  p: string,
  opts: https.RequestOptions = {},
): Promise<{ status: number; body: string } | { error: string }> {
  return new Promise((resolve) => {
    const req = https.request(
      url + p,
      {
        ca: fs.readFileSync(f('server-ca.pem')),
        agent: false,
        headers: { Authorization: 'Bearer tls-master-key-0123456789' },
        ...opts,
      },
      (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    req.end();
  });
}

const client = (name: string) => ({ cert: fs.readFileSync(f(`${name}.pem`)), key: fs.readFileSync(f(`${name}.key`)) });

describe('HTTPS with --ssl-cert-path and --ssl-key-path', () => {
  let server: Child;
  beforeAll(async () => {
    server = await start([]);
  });

  it('when the server starts, then the URL it prints says https', () => {
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  });

  it('when a client trusts the CA, then the API answers over TLS', async () => {
    expect(await get(server.url, '/health')).toEqual({ status: 200, body: '{"status":"available"}' });
    const r = await get(server.url, '/indexes');
    expect(r).toMatchObject({ status: 200 });
  });

  it('when a client does not trust the CA, then the handshake fails', async () => {
    expect(await get(server.url, '/health', { ca: fs.readFileSync(f('rogue-ca.pem')) })).toEqual({
      error: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    });
  });

  it('when a client speaks plain HTTP to the port, then it gets no API answer', async () => {
    const plain = server.url.replace('https://', 'http://');
    const r = await fetch(`${plain}/health`).then(
      (x) => x.status,
      () => 'failed',
    );
    expect(r).not.toBe(200);
  });

  it('when neither --ssl-resumption nor --ssl-tickets is set, then a session is not resumed', async () => {
    expect(await resumed(server.url, 'TLSv1.3')).toBe(false);
    expect(await resumed(server.url, 'TLSv1.2')).toBe(false);
  });
});

/** Connects twice, the second time offering the first connection's session. */
async function resumed(url: string, version: tls.SecureVersion): Promise<boolean> {
  const port = Number(new URL(url).port);
  const ca = fs.readFileSync(f('server-ca.pem'));
  const session = await new Promise<Buffer | undefined>((resolve, reject) => {
    let s: Buffer | undefined;
    const sock = tls.connect({ host: '127.0.0.1', port, ca, maxVersion: version, minVersion: version }, () => {
      // TLS 1.3 tickets arrive after the handshake: give them a round trip.
      sock.write('GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    });
    sock.on('session', (b: Buffer) => (s = b));
    sock.on('data', () => undefined);
    sock.on('end', () => resolve(s ?? sock.getSession()));
    sock.on('error', reject);
  });
  if (!session) return false;
  return new Promise((resolve, reject) => {
    const sock = tls.connect({ host: '127.0.0.1', port, ca, session, maxVersion: version, minVersion: version }, () => {
      const reused = sock.isSessionReused();
      sock.end();
      resolve(reused);
    });
    sock.on('error', reject);
  });
}

describe('TLS sessions', () => {
  it('when --ssl-tickets is set, then a session is resumed from its ticket', async () => {
    const s = await start(['--ssl-tickets']);
    expect(await resumed(s.url, 'TLSv1.2')).toBe(true);
    expect(await resumed(s.url, 'TLSv1.3')).toBe(true);
  });

  it('when --ssl-resumption is set, then a session is resumed from the server cache', async () => {
    const s = await start(['--ssl-resumption']);
    expect(await resumed(s.url, 'TLSv1.2')).toBe(true);
  });
});

describe('client certificates', () => {
  it('when --ssl-auth-path and --ssl-require-auth are set, then only clients with a certificate from that CA are served', async () => {
    const s = await start(['--ssl-auth-path', f('client-ca.pem'), '--ssl-require-auth']);
    expect(await get(s.url, '/health', client('alice'))).toMatchObject({ status: 200 });
    expect(await get(s.url, '/health')).toHaveProperty('error');
    expect(await get(s.url, '/health', client('mallory'))).toHaveProperty('error');
  });

  it('when only --ssl-auth-path is set, then a client may present no certificate, but not a bad one', async () => {
    const s = await start(['--ssl-auth-path', f('client-ca.pem')]);
    expect(await get(s.url, '/health')).toMatchObject({ status: 200 });
    expect(await get(s.url, '/health', client('alice'))).toMatchObject({ status: 200 });
    expect(await get(s.url, '/health', client('mallory'))).toHaveProperty('error');
  });
});

describe('OCSP stapling', () => {
  it('when --ssl-ocsp-path is set, then a client asking for the status gets the file as stapled', async () => {
    const s = await start(['--ssl-ocsp-path', f('ocsp.der')]);
    const stapled = await new Promise<Buffer | null>((resolve, reject) => {
      const sock = tls.connect({
        host: '127.0.0.1',
        port: Number(new URL(s.url).port),
        ca: fs.readFileSync(f('server-ca.pem')),
        requestOCSP: true,
      } as tls.ConnectionOptions);
      let got: Buffer | null = null;
      sock.on('OCSPResponse', (b: Buffer) => (got = b));
      sock.on('secureConnect', () => {
        sock.end();
        resolve(got);
      });
      sock.on('error', reject);
    });
    expect(stapled?.toString('hex')).toBe('30030a0100');
  });
});

describe('bad TLS start-up', () => {
  it('when the certificate file does not exist, then start-up fails naming the option', async () => {
    const r = await failedStart([
      '--db-path',
      fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-tls-db-')),
      '--http-addr',
      '127.0.0.1:0',
      '--ssl-cert-path',
      f('nope.pem'),
      '--ssl-key-path',
      f('localhost.key'),
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--ssl-cert-path');
  });

  it('when the key does not match the certificate, then start-up fails', async () => {
    const r = await failedStart([
      '--db-path',
      fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-tls-db-')),
      '--http-addr',
      '127.0.0.1:0',
      '--ssl-cert-path',
      f('localhost.pem'),
      '--ssl-key-path',
      f('alice.key'),
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--ssl-key-path');
  });

  it('when only MEILI_SSL_CERT_PATH is set, then start-up fails asking for the key', async () => {
    const r = await failedStart(
      ['--db-path', fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-tls-db-')), '--http-addr', '127.0.0.1:0'],
      { MEILI_SSL_CERT_PATH: f('localhost.pem') },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--ssl-cert-path needs --ssl-key-path');
  });
});
