import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTrustedProxies } from '../../src/http/client-address.js';
import { createSignInRoutes } from '../../src/dashboard/sign-in.routes.js';
import { createFakeClock } from '../../src/shared/clock.js';
import { usersProblems, type UsersService } from '../../src/users/index.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { signIn as signedInAs } from './signed-in.js';

const PASSWORD = 'correct horse battery staple';
const PROXY = '127.0.0.1';

/** A sign-in through the form from `peer` (the socket's address), optionally with X-Forwarded-For. */
function signIn(
  t: TestApp,
  { peer, forwardedFor, password = PASSWORD }: { peer: string; forwardedFor?: string; password?: string },
) {
  return t.app.request(
    '/sign-in',
    {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}),
      },
      body: new URLSearchParams({ username: 'alice', password, next: '/' }).toString(),
    },
    { incoming: { socket: { remoteAddress: peer } } },
  );
}

describe('dashboard sign-in under attack', () => {
  let t: TestApp;
  beforeEach(async () => {
    const clock = createFakeClock(new Date('2026-03-01T10:00:00Z'));
    t = createTestApp({ clock, app: { trustedProxies: createTrustedProxies([PROXY]) } });
    await t.services.users.create('alice', PASSWORD);
  });
  afterEach(() => t.close());

  it('limits the attacker’s address, never the real user’s elsewhere', async () => {
    for (let i = 0; i < 5; i++)
      expect((await signIn(t, { peer: '203.0.113.5', password: `wrong guess ${i}` })).status).toBe(401);
    const limited = await signIn(t, { peer: '203.0.113.5' });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get('set-cookie')).toBeNull();
    expect(await limited.text()).toMatch(/too many failed sign-ins; try again in \d+ s/);

    const real = await signIn(t, { peer: '198.51.100.20' });
    expect(real.status).toBe(303);
    expect(real.headers.get('set-cookie')).toMatch(/sw_session=/);
  });

  it('tells clients behind a trusted proxy apart by X-Forwarded-For, and logs their own address', async () => {
    for (let i = 0; i < 5; i++)
      expect((await signIn(t, { peer: PROXY, forwardedFor: '203.0.113.5', password: `wrong guess ${i}` })).status).toBe(
        401,
      );
    expect((await signIn(t, { peer: PROXY, forwardedFor: '203.0.113.5' })).status).toBe(429);
    // Forging an address to the left changes nothing: the proxy appended the real one.
    expect((await signIn(t, { peer: PROXY, forwardedFor: '192.0.2.99, 203.0.113.5' })).status).toBe(429);
    // The real user, through the same proxy.
    expect((await signIn(t, { peer: PROXY, forwardedFor: '198.51.100.20' })).status).toBe(303);

    expect(t.logs.events('user.sign_in_failed').map((event) => event.address)).toEqual(Array(5).fill('203.0.113.5'));
    expect(t.logs.events('user.signed_in').map((event) => event.address)).toEqual(['198.51.100.20']);
  });

  it('answers a full hashing pool with 429 and Retry-After on the form', async () => {
    // The pool filled between the form's first check and the hash: signIn's own refusal.
    const busy = {
      signInBusy: () => undefined,
      signIn: () =>
        Promise.reject(usersProblems.busy.create('too many sign-ins at once; try again in 3 s', { retryAfter: 3 })),
    } as unknown as UsersService;
    const routes = createSignInRoutes({ users: busy, httpsPublicUrl: false });
    const response = await routes.request('/sign-in', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username: 'alice', password: PASSWORD }).toString(),
    });
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('3');
    expect(await response.text()).toContain('too many sign-ins at once; try again in 3 s');
  });

  it('refuses a token name with control characters from the settings page (400 token-name-invalid)', async () => {
    const user = await signedInAs(t, 'bob');
    const response = await user.post('/settings/tokens', { name: 'deploy\nFAKE LOG LINE', scope: 'read' });
    // Said on the settings page itself, not as the API's problem document.
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toContain('text/html');
    expect(await response.text()).toMatch(/control character/i);
    expect((await t.services.tokens.list()).map((token) => token.name)).not.toContain('deploy\nFAKE LOG LINE');
  });
});
