import { afterEach, describe, expect, it } from 'vitest';
import { startFakeWordPress, type FakeWordPress } from '../support/fake-wordpress/index.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { signIn } from '../dashboard/signed-in.js';

/**
 * One-click sign-in to wp-admin, against a fake site: the API's answer, the per-site setting, the
 * version gate, a hostile site's link, and the dashboard's button and the page that moves on.
 * The real connector on real WordPress: test/journeys/wp-admin-sign-in.e2e.integration.test.ts.
 */
const TOKEN = 'a'.repeat(64);

let t: TestApp;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
  await t?.close();
});

async function connected(connector = '1.6.0', link?: (site: FakeWordPress) => unknown) {
  const site = await startFakeWordPress();
  closers.push(site.close);
  site.answers['GET sitewarden/v1/info'] = { ...(site.answers['GET sitewarden/v1/info'] as object), connector };
  site.answers['POST sitewarden/v1/admin-login'] = link?.(site) ?? {
    url: `${site.url}/wp-login.php?sitewarden_login=${TOKEN}`,
    expiresAt: '2030-01-01T00:01:00Z',
  };
  t = createTestApp();
  const answer = await t.call('POST', '/api/sites', {
    json: { url: site.url, username: site.username, applicationPassword: site.applicationPassword },
  });
  expect(answer.status, answer.text).toBe(201);
  const id = answer.json.id as string;
  await t.services.sync.syncNow(id);
  site.requests.length = 0;
  return { site, id };
}

describe('POST /api/sites/{siteId}/admin-login', () => {
  it('answers the site’s single-use link and records who asked, never the link', async () => {
    const { site, id } = await connected();
    const answer = await t.call('POST', `/api/sites/${id}/admin-login`);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.json).toEqual({
      url: `${site.url}/wp-login.php?sitewarden_login=${TOKEN}`,
      expiresAt: '2030-01-01T00:01:00.000Z',
    });
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(site.requests).toEqual(['sitewarden/v1/admin-login']);
    const [event] = t.logs.events('site.admin-login');
    expect(event).toMatchObject({
      siteId: id,
      url: expect.stringContaining(site.url),
      wordpressUser: site.username,
      requestedByKind: 'token',
      requestedById: expect.stringMatching(/^tok_/),
      expiresAt: '2030-01-01T00:01:00.000Z',
    });
    expect(t.logs.raw()).not.toContain(TOKEN);
  });

  it('is refused, without a request to the site, when the site has it turned off; on again by default', async () => {
    const { site, id } = await connected();
    expect((await t.call('GET', `/api/sites/${id}/settings`)).json.adminLogin).toEqual({ enabled: true });
    const off = await t.call('PATCH', `/api/sites/${id}`, { json: { adminLogin: { enabled: false } } });
    expect(off.status, off.text).toBe(200);
    expect(off.json.adminLogin).toEqual({ enabled: false });

    const refused = await t.call('POST', `/api/sites/${id}/admin-login`);
    expect(refused.status, refused.text).toBe(409);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(refused.json.type).toBe('/problems/admin-login-disabled');
    expect(site.requests).toEqual([]);
    expect(t.logs.events('site.admin-login')).toEqual([]);

    const reset = await t.call('PATCH', `/api/sites/${id}`, { json: { adminLogin: { enabled: null } } });
    expect(reset.json.adminLogin).toEqual({ enabled: true });
    expect((await t.call('POST', `/api/sites/${id}/admin-login`)).status).toBe(200);
  });

  it('answers connector-outdated for a connector older than 1.6.0', async () => {
    const { id } = await connected('1.5.0');
    const answer = await t.call('POST', `/api/sites/${id}/admin-login`);
    expect(answer.status, answer.text).toBe(422);
    expect(answer.json).toMatchObject({
      type: '/problems/connector-outdated',
      feature: 'admin-login',
      requiredVersion: '1.6.0',
    });
  });

  it.each([
    ['another origin', () => ({ url: 'https://attacker.example/wp-login.php?x=1', expiresAt: '2030-01-01T00:00:00Z' })],
    ['a script URL', () => ({ url: 'javascript:alert(1)', expiresAt: '2030-01-01T00:00:00Z' })],
    [
      'credentials in the URL',
      (site: FakeWordPress) => ({
        url: site.url.replace('://', '://user:pass@') + '/wp-login.php',
        expiresAt: '2030-01-01T00:00:00Z',
      }),
    ],
    [
      'an oversized URL',
      (site: FakeWordPress) => ({ url: `${site.url}/?${'x'.repeat(5000)}`, expiresAt: '2030-01-01T00:00:00Z' }),
    ],
    ['no expiry', (site: FakeWordPress) => ({ url: `${site.url}/wp-login.php` })],
  ])('refuses a site’s link with %s as site-invalid-response', async (_, link) => {
    const { id } = await connected('1.6.0', link);
    const answer = await t.call('POST', `/api/sites/${id}/admin-login`);
    expect(answer.status, answer.text).toBe(502);
    expect(answer.json.type).toBe('/problems/site-invalid-response');
    expect(t.logs.events('site.admin-login')).toEqual([]);
  });

  it('answers 404 for an unknown site and 403 to a read token', async () => {
    const { id } = await connected();
    expect((await t.call('POST', '/api/sites/site_nope/admin-login')).json.type).toBe('/problems/site-not-found');
    expect((await t.call('POST', `/api/sites/${id}/admin-login`, { token: t.readToken })).status).toBe(403);
  });
});

describe('dashboard: Sign in to wp-admin', () => {
  it('shows the button when offered, and moves the browser on to the link from a page of its own', async () => {
    const { site, id } = await connected();
    const user = await signIn(t);
    expect(await (await user.get(`/sites/${id}`)).text()).toContain('Sign in to wp-admin');

    const moved = await user.post(`/sites/${id}/admin-login`, {});
    expect(moved.status).toBe(200);
    const link = `${site.url}/wp-login.php?sitewarden_login=${TOKEN}`;
    expect(moved.headers.get('refresh')).toBe(`0; url=${link}`);
    expect(moved.headers.get('cache-control')).toBe('no-store');
    expect(await moved.text()).toContain(`href="${link}"`);
    expect(t.logs.events('site.admin-login')).toEqual([
      expect.objectContaining({ siteId: id, requestedByKind: 'user', requestedById: expect.stringMatching(/^usr_/) }),
    ]);
  });

  it('hides the button when the connector is too old or the setting is off; a refused post says why', async () => {
    const { site, id } = await connected('1.5.0');
    const user = await signIn(t);
    const button = async () => (await (await user.get(`/sites/${id}`)).text()).includes('Sign in to wp-admin');
    expect(await button()).toBe(false);
    const refused = await user.post(`/sites/${id}/admin-login`, {});
    expect(refused.status).toBe(303);
    expect(await user.follow(refused)).toMatch(
      /Could not sign in to wp-admin: admin-login needs Sitewarden connector 1\.6\.0/,
    );

    site.answers['GET sitewarden/v1/info'] = {
      ...(site.answers['GET sitewarden/v1/info'] as object),
      connector: '1.6.0',
    };
    await t.services.sync.syncNow(id);
    expect(await button()).toBe(true);
    await user.post(`/sites/${id}/settings`, {}); // the page's settings form leaves adminLogin alone
    expect(await button()).toBe(true);
    const turnOff = await t.services.adminLogin.prepareSettings(id, { enabled: false });
    await turnOff();
    expect(await button()).toBe(false);
  });
});
