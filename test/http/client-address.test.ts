import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createAuthFailureLimiter } from '../../src/http/auth-rate-limit.js';
import { clientAddress, clientAddressMiddleware, createTrustedProxies } from '../../src/http/client-address.js';
import { createFakeClock } from '../../src/shared/clock.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/** What @hono/node-server hands a handler as its env: the incoming request and its socket. */
const from = (remoteAddress: string) => ({ incoming: { socket: { remoteAddress } } });

/** A tiny app answering the client address it resolved. */
function echo(trusted: string[]) {
  const app = new Hono();
  app.use('*', clientAddressMiddleware(createTrustedProxies(trusted)));
  app.get('/', (c) => c.text(clientAddress(c)));
  return async (peer: string | null, forwardedFor?: string) => {
    const headers: Record<string, string> = forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor };
    const response = await app.request('/', { headers }, peer ? from(peer) : undefined);
    return response.text();
  };
}

describe('the client address', () => {
  it('is the connection’s address, X-Forwarded-For ignored, without trusted proxies', async () => {
    const address = echo([]);
    expect(await address('203.0.113.5')).toBe('203.0.113.5');
    expect(await address('203.0.113.5', '198.51.100.1')).toBe('203.0.113.5');
    expect(await address('::ffff:203.0.113.5')).toBe('203.0.113.5');
    expect(await address(null, '198.51.100.1')).toBe('local');
  });

  it('is the right-most untrusted X-Forwarded-For entry behind a trusted proxy', async () => {
    const address = echo(['127.0.0.1', '10.0.0.0/8', 'fd00::/8']);
    expect(await address('127.0.0.1', '198.51.100.7')).toBe('198.51.100.7');
    expect(await address('::ffff:127.0.0.1', '198.51.100.7')).toBe('198.51.100.7');
    // A client's own X-Forwarded-For is left of what the proxies appended: never read.
    expect(await address('127.0.0.1', '1.2.3.4, 198.51.100.7')).toBe('198.51.100.7');
    expect(await address('127.0.0.1', '1.2.3.4, 198.51.100.7, 10.1.2.3')).toBe('198.51.100.7');
    expect(await address('fd00::1', '2001:db8::7, fd12::3')).toBe('2001:db8::7');
    expect(await address('127.0.0.1', '198.51.100.7:4711')).toBe('198.51.100.7');
    expect(await address('127.0.0.1', '[2001:db8::7]:443')).toBe('2001:db8::7');
    // No header, or only trusted hops: the left-most hop.
    expect(await address('127.0.0.1')).toBe('127.0.0.1');
    expect(await address('127.0.0.1', '10.0.0.9')).toBe('10.0.0.9');
    // A peer that is not a trusted proxy cannot name another address.
    expect(await address('203.0.113.66', '198.51.100.7')).toBe('203.0.113.66');
    expect(await address('11.0.0.1', '198.51.100.7')).toBe('11.0.0.1');
  });

  it('reads SITEWARDEN_TRUSTED_PROXIES: addresses and CIDR ranges, none by default, a clear error otherwise', () => {
    expect(loadConfig({}).trustedProxies).toEqual([]);
    expect(loadConfig({ SITEWARDEN_TRUSTED_PROXIES: '127.0.0.1, ::1 10.0.0.0/8,fd00::/8' }).trustedProxies).toEqual([
      '127.0.0.1',
      '::1',
      '10.0.0.0/8',
      'fd00::/8',
    ]);
    for (const [value, message] of [
      ['localhost', /SITEWARDEN_TRUSTED_PROXIES: localhost is not an IP address or CIDR range/],
      ['10.0.0.0/33', /10\.0\.0\.0\/33 has an invalid prefix length/],
      ['10.0.0.0/8/1', /not an IP address or CIDR range/],
      ['fd00::/x', /invalid prefix length/],
    ] as const) {
      expect(() => loadConfig({ SITEWARDEN_TRUSTED_PROXIES: value }), value).toThrow(ConfigError);
      expect(() => loadConfig({ SITEWARDEN_TRUSTED_PROXIES: value }), value).toThrow(message);
    }
  });
});

describe('the API token failure limiter behind a reverse proxy', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  const badToken = (app: TestApp['app'], peer: string, forwardedFor?: string) =>
    app.request(
      '/api/sites',
      { headers: { authorization: 'Bearer swt_nope', ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) } },
      from(peer),
    );

  it('limits each client behind a trusted proxy on its own', async () => {
    const clock = createFakeClock(new Date('2026-03-02T10:00:00Z'));
    t = createTestApp({
      clock,
      app: {
        authLimiter: createAuthFailureLimiter({ limit: 3, clock }),
        trustedProxies: createTrustedProxies(['127.0.0.1']),
      },
    });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await badToken(t.app, '127.0.0.1', '198.51.100.7')).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    // Another client through the same proxy is not the flood; a forged header does not escape it.
    expect((await badToken(t.app, '127.0.0.1', '198.51.100.8')).status).toBe(401);
    expect((await badToken(t.app, '127.0.0.1', '192.0.2.1, 198.51.100.7')).status).toBe(429);
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy', async () => {
    const clock = createFakeClock(new Date('2026-03-02T10:00:00Z'));
    t = createTestApp({ clock, app: { authLimiter: createAuthFailureLimiter({ limit: 3, clock }) } });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await badToken(t.app, '203.0.113.9', `198.51.100.${i}`)).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    expect((await badToken(t.app, '203.0.113.10')).status).toBe(401);
  });
});
