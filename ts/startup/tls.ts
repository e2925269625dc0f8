/**
 * HTTPS from the `--ssl-*` options, on Node's own TLS stack (OpenSSL).
 *
 * - `--ssl-cert-path` + `--ssl-key-path` (PEM, the cert file may hold the chain): required
 *   together. Meilisearch silently serves plain HTTP when only one is given; Quarry refuses,
 *   since an operator who names a certificate means HTTPS.
 * - `--ssl-auth-path`: CA certificates for client certificates. Alone, a client may present
 *   none, but one it presents must verify (a bad one closes the connection); with
 *   `--ssl-require-auth`, every client must present a valid one (mutual TLS).
 *   `--ssl-require-auth` without `--ssl-auth-path` is refused (there is nothing to check against).
 * - `--ssl-ocsp-path`: a DER OCSP response, stapled when the client asks for it.
 * - `--ssl-resumption`: session-id resumption from an in-memory cache of 256 sessions
 *   (Node's servers keep no session cache unless given one, so it is off otherwise).
 * - `--ssl-tickets`: session tickets; without it they are turned off (`SSL_OP_NO_TICKET`),
 *   as Meilisearch only issues tickets when asked.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import type https from 'node:https';
import tls from 'node:tls';

export interface TlsConfig {
  certPath: string;
  keyPath: string;
  authPath: string | null;
  ocspPath: string | null;
  requireAuth: boolean;
  resumption: boolean;
  tickets: boolean;
}

export type TlsRaw = {
  sslCertPath?: string;
  sslKeyPath?: string;
  sslAuthPath?: string;
  sslOcspPath?: string;
  sslRequireAuth?: string;
  sslResumption?: string;
  sslTickets?: string;
};

/** The TLS configuration from the raw options, or null for plain HTTP; throws on inconsistent options. */
export function tlsConfigFrom(raw: TlsRaw, bool: (name: string, v: string) => boolean): TlsConfig | null {
  const requireAuth = raw.sslRequireAuth === undefined ? false : bool('--ssl-require-auth', raw.sslRequireAuth);
  const resumption = raw.sslResumption === undefined ? false : bool('--ssl-resumption', raw.sslResumption);
  const tickets = raw.sslTickets === undefined ? false : bool('--ssl-tickets', raw.sslTickets);
  const { sslCertPath: cert, sslKeyPath: key } = raw;
  if (cert === undefined && key === undefined) {
    const stray = [
      raw.sslAuthPath !== undefined && '--ssl-auth-path',
      raw.sslOcspPath !== undefined && '--ssl-ocsp-path',
      requireAuth && '--ssl-require-auth',
      resumption && '--ssl-resumption',
      tickets && '--ssl-tickets',
    ].filter(Boolean);
    if (stray.length)
      throw new TlsOptionError(`${stray.join(', ')}: TLS options need --ssl-cert-path and --ssl-key-path`);
    return null;
  }
  if (cert === undefined)
    throw new TlsOptionError('--ssl-key-path needs --ssl-cert-path: the certificate and its key are given together');
  if (key === undefined)
    throw new TlsOptionError('--ssl-cert-path needs --ssl-key-path: the certificate and its key are given together');
  if (requireAuth && raw.sslAuthPath === undefined)
    throw new TlsOptionError(
      '--ssl-require-auth needs --ssl-auth-path: the CA certificates client certificates are checked against',
    );
  return {
    certPath: cert,
    keyPath: key,
    authPath: raw.sslAuthPath ?? null,
    ocspPath: raw.sslOcspPath ?? null,
    requireAuth,
    resumption,
    tickets,
  };
}

export class TlsOptionError extends Error {}

function readFile(option: string, file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    throw new TlsOptionError(`${option}: cannot read \`${file}\`: ${(err as Error).message}`);
  }
}

/** Node's server options for the configuration; reads the files (a bad file fails start-up). */
export function httpsOptions(c: TlsConfig): https.ServerOptions {
  const opts: https.ServerOptions = {
    cert: readFile('--ssl-cert-path', c.certPath),
    key: readFile('--ssl-key-path', c.keyPath),
    ALPNProtocols: ['http/1.1'],
  };
  if (!c.tickets) opts.secureOptions = crypto.constants.SSL_OP_NO_TICKET;
  if (c.authPath !== null) {
    opts.ca = readFile('--ssl-auth-path', c.authPath);
    opts.requestCert = true;
    opts.rejectUnauthorized = c.requireAuth;
  }
  try {
    // Fails here, with the option named, rather than on the first connection.
    tls.createSecureContext(opts);
  } catch (err) {
    throw new TlsOptionError(
      `--ssl-cert-path / --ssl-key-path${c.authPath ? ' / --ssl-auth-path' : ''}: ${(err as Error).message}`,
    );
  }
  return opts;
}

/** Wires what the options need beyond the constructor: OCSP stapling, session cache, optional client certs. */
export function attachTls(server: tls.Server, c: TlsConfig): void {
  if (c.ocspPath !== null) {
    const response = readFile('--ssl-ocsp-path', c.ocspPath);
    server.on('OCSPRequest', (_cert: Buffer, _issuer: Buffer, done: (err: Error | null, resp?: Buffer) => void) =>
      done(null, response),
    );
  }
  if (c.resumption) {
    const sessions = new Map<string, Buffer>();
    server.on('newSession', (id: Buffer, data: Buffer, done: () => void) => {
      if (sessions.size >= 256) sessions.delete(sessions.keys().next().value as string);
      sessions.set(id.toString('hex'), data);
      done();
    });
    server.on('resumeSession', (id: Buffer, done: (err: Error | null, data: Buffer | null) => void) =>
      done(null, sessions.get(id.toString('hex')) ?? null),
    );
  }
  if (c.authPath !== null && !c.requireAuth) {
    // Optional client certificates: none is fine, an invalid one is not.
    server.on('secureConnection', (socket: tls.TLSSocket) => {
      if (!socket.authorized && socket.getPeerCertificate() && Object.keys(socket.getPeerCertificate()).length > 0)
        socket.destroy();
    });
  }
}
