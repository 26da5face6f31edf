import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOutgoingAgents, discardBody, sendRequest, type OutgoingAgents } from '../../src/shared/outgoing-http.js';
import { startFakeSite } from '../support/fake-wordpress/loopback-server.js';
import { makeTestAuthority } from '../support/tls-certificates.js';

type Site = Awaited<ReturnType<typeof startFakeSite>>;

/** A GET on a new connection each time (`connection: close`), so each request makes its own handshake; its status. */
async function get(agents: OutgoingAgents, url: string): Promise<number> {
  const response = await sendRequest(new URL(url), {
    method: 'GET',
    headers: { connection: 'close' },
    signal: AbortSignal.timeout(5_000),
    agents,
  });
  await discardBody(response, 1024);
  return response.statusCode ?? 0;
}

/** The code of the error a request fails with. */
const failure = (request: Promise<unknown>) =>
  request.then(
    () => 'answered',
    (error: NodeJS.ErrnoException) => error.code,
  );

describe('outgoing HTTPS (one TLS context shared by every connection)', () => {
  const trusted = makeTestAuthority();
  const other = makeTestAuthority('Another CA');
  const sites: Site[] = [];
  let agents: OutgoingAgents;
  let secure: Site;
  let otherAuthority: Site;
  let otherName: Site;

  beforeAll(async () => {
    const serve = async (tls: { key: string; cert: string }) => {
      const site = await startFakeSite((_req, res) => res.end('secure'), { tls });
      sites.push(site);
      return site;
    };
    secure = await serve(trusted.issue('127.0.0.1'));
    otherAuthority = await serve(other.issue('127.0.0.1'));
    otherName = await serve(trusted.issue('example.test'));
    agents = createOutgoingAgents({ ca: trusted.ca });
  });
  afterAll(async () => {
    agents.destroy();
    await Promise.all(sites.map((site) => site.close()));
    trusted.remove();
    other.remove();
  });

  it('verifies each new connection’s certificate against the authorities', async () => {
    expect(secure.url).toMatch(/^https:/);
    // Several connections, one after another and at once, through the one context.
    expect(await get(agents, secure.url)).toBe(200);
    expect(await Promise.all([get(agents, secure.url), get(agents, secure.url), get(agents, secure.url)])).toEqual([
      200, 200, 200,
    ]);
  });

  it('refuses a certificate another authority signed, between trusted ones', async () => {
    expect(await failure(get(agents, otherAuthority.url))).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    expect(await get(agents, secure.url)).toBe(200);
  });

  it('refuses a certificate for another name', async () => {
    expect(await failure(get(agents, otherName.url))).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
  });

  it('trusts Node’s default authorities only, by default', async () => {
    const system = createOutgoingAgents();
    try {
      expect(await failure(get(system, secure.url))).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    } finally {
      system.destroy();
    }
  });

  it('resumes a host’s TLS session on its next connection, unless told not to (the sites’ agents)', async () => {
    // A server that resumes sessions (the fake sites never do); it tells which connections resumed one.
    const resumed: boolean[] = [];
    const server = createServer(trusted.issue('127.0.0.1'), (_req, res) => res.end('resumable'));
    server.on('secureConnection', (socket: TLSSocket) => resumed.push(socket.isSessionReused()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const sites = createOutgoingAgents({ ca: trusted.ca, resumeTls: false });
    try {
      const twice = async (through: OutgoingAgents) => {
        resumed.length = 0;
        expect([await get(through, url), await get(through, url)]).toEqual([200, 200]);
        return [...resumed];
      };
      expect(await twice(agents)).toEqual([false, true]);
      expect(await twice(sites)).toEqual([false, false]);
    } finally {
      sites.destroy();
      server.closeAllConnections();
      server.close();
    }
  });
});
