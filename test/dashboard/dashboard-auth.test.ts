import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFakeClock, createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';
import { CONTENT_SECURITY_POLICY } from '../../src/dashboard/security.js';
import { STYLESHEET } from '../../src/dashboard/stylesheet.js';

const PASSWORD = 'correct horse battery staple';

/** Signs in through the form and returns the session cookie and the page's CSRF token. */
async function signIn(t: TestApp, username = 'alice', password = PASSWORD) {
  const response = await t.app.request('/sign-in', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username, password, next: '/' }).toString(),
  });
  const setCookie = response.headers.get('set-cookie') ?? '';
  const cookie = /sw_session=[^;]+/.exec(setCookie)?.[0];
  return { response, setCookie, cookie };
}

async function csrfOf(t: TestApp, cookie: string): Promise<string> {
  const html = await (await t.app.request('/', { headers: { cookie } })).text();
  return /data-csrf="([^"]+)"/.exec(html)![1]!;
}

describe('dashboard sign-in, sessions and CSRF', () => {
  let t: TestApp;
  let clock: ReturnType<typeof createFakeClock>;
  beforeEach(async () => {
    clock = createFakeClock(new Date('2026-03-01T10:00:00Z'));
    t = createTestApp({ clock });
    await t.services.users.create('alice', PASSWORD);
  });
  afterEach(() => t.close());

  it('sends every page signed out to sign-in, and answers the sign-in page with a strict CSP', async () => {
    for (const path of ['/', '/sites/x', '/activity', '/updates', '/settings', '/connector.zip']) {
      const response = await t.app.request(path);
      expect(response.status, path).toBe(303);
      expect(response.headers.get('location')).toBe(`/sign-in?next=${encodeURIComponent(path)}`);
    }
    const page = await t.app.request('/sign-in');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe-inline');
    expect(CONTENT_SECURITY_POLICY).toContain("frame-ancestors 'none'");
    // No inline script or style attribute; the one inline stylesheet is the dashboard's, allowed by its hash.
    const text = await page.text();
    expect(text).not.toMatch(/<script>|style="/);
    expect(text.match(/<style>/g)).toHaveLength(1);
    expect(text).toContain(`<style>${STYLESHEET}</style>`);
  });

  it('signs in with the right password: an HttpOnly, SameSite=Strict cookie, Secure only over https', async () => {
    const { response, setCookie, cookie } = await signIn(t);
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/');
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(setCookie).not.toMatch(/Secure/);
    const overview = await t.app.request('/', { headers: { cookie: cookie! } });
    expect(overview.status).toBe(200);
    expect(overview.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(await overview.text()).toContain('No sites yet');

    const https = await t.app.request('https://dash.example/sign-in', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username: 'alice', password: PASSWORD }).toString(),
    });
    expect(https.headers.get('set-cookie')).toMatch(/Secure/);
  });

  it('refuses a wrong password without a cookie, and rate-limits repeated failures per user name and address', async () => {
    const wrong = await signIn(t, 'alice', 'not the password at all');
    expect(wrong.response.status).toBe(401);
    expect(wrong.setCookie).toBe('');
    for (let i = 0; i < 4; i++) await signIn(t, 'alice', 'still not the password');
    const limited = await signIn(t);
    expect(limited.response.status).toBe(429);
    expect(limited.response.headers.get('retry-after')).toBeTruthy();
    expect(limited.cookie).toBeUndefined();
    expect(t.logs.events('user.sign_in_failed').length).toBeGreaterThanOrEqual(5);
    clock.advance(61_000);
    expect((await signIn(t)).response.status).toBe(303);
  });

  it('refuses a state-changing request without the CSRF token or with a wrong one', async () => {
    const { cookie } = await signIn(t);
    const csrf = await csrfOf(t, cookie!);
    const post = (body: Record<string, string>, headers: Record<string, string> = {}) =>
      t.app.request('/sign-out', {
        method: 'POST',
        headers: { cookie: cookie!, 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams(body).toString(),
      });
    const missing = await post({});
    expect(missing.status).toBe(403);
    expect(missing.headers.get('content-type')).toMatch(/problem\+json/);
    expect(((await missing.json()) as { type: string }).type).toBe('/problems/csrf-token-invalid');
    expect((await post({ _csrf: 'forged' })).status).toBe(403);
    expect((await post({}, { 'X-CSRF-Token': 'forged' })).status).toBe(403);
    // Still signed in after the refusals; the right token signs out and ends the session.
    expect((await t.app.request('/', { headers: { cookie: cookie! } })).status).toBe(200);
    const out = await post({ _csrf: csrf });
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe('/sign-in');
    expect((await t.app.request('/', { headers: { cookie: cookie! } })).status).toBe(303);
  });

  it('ends a session after 12 idle hours', async () => {
    const { cookie } = await signIn(t);
    clock.advance(11 * 3_600_000);
    expect((await t.app.request('/', { headers: { cookie: cookie! } })).status).toBe(200);
    clock.advance(11 * 3_600_000);
    expect((await t.app.request('/', { headers: { cookie: cookie! } })).status).toBe(200);
    clock.advance(12 * 3_600_000 + 1);
    expect((await t.app.request('/', { headers: { cookie: cookie! } })).status).toBe(303);
    expect(await t.services.users.pruneSessions()).toBe(1);
  });

  it('keeps the cookie’s expiry with the server’s sliding one', async () => {
    const { cookie } = await signIn(t);
    clock.advance(11 * 3_600_000);
    const page = await t.app.request('/', { headers: { cookie: cookie! } });
    const renewed = page.headers.get('set-cookie') ?? '';
    expect(renewed).toMatch(/sw_session=[^;]+;/);
    const expires = new Date(/Expires=([^;]+)/i.exec(renewed)![1]!).getTime();
    expect(expires).toBeGreaterThan(clock.now().getTime() + 11 * 3_600_000);
    expect(renewed).toMatch(/HttpOnly/i);
    expect(renewed).toMatch(/SameSite=Strict/i);
  });

  it('follows `next` only to a path of this origin, and never answers 500 for it', async () => {
    await t.services.users.create('bob', 'correct horse battery staple');
    for (const next of [
      '/\t/evil.example',
      '/\t\\evil.example',
      '//evil.example',
      '/\\evil.example',
      '/a\rSet-Cookie: x=1',
      'https://evil.example/',
    ]) {
      const response = await t.app.request('/sign-in', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ username: 'bob', password: 'correct horse battery staple', next }).toString(),
      });
      expect(response.status, JSON.stringify(next)).toBe(303);
      expect(response.headers.get('location'), JSON.stringify(next)).toBe('/');
      const form = await t.app.request(`/sign-in?next=${encodeURIComponent(next)}`);
      expect(form.status, JSON.stringify(next)).toBe(200);
      expect(await form.text()).toContain('name="next" value="/"');
    }
    const local = await t.app.request('/sign-in?next=%2Fsites%2Fsite_1%3Fx%3D1');
    expect(await local.text()).toContain('name="next" value="/sites/site_1?x=1"');
  });

  it('keeps /api on bearer tokens: a session cookie opens no API route', async () => {
    const { cookie } = await signIn(t);
    insertConnectedSite(t);
    expect((await t.app.request('/api/sites', { headers: { cookie: cookie! } })).status).toBe(401);
    const withToken = await t.call('GET', '/api/sites');
    expect(withToken.status).toBe(200);
    expect(withToken.json.items).toHaveLength(1);
  });

  it('creates the first admin once, with a random password written to a private file', async () => {
    const fresh = createTestApp({ clock });
    try {
      const { mkdtempSync, readFileSync, statSync } = await import('node:fs');
      const { tmpdir } = await import('node:os');
      const { join } = await import('node:path');
      const dir = mkdtempSync(join(tmpdir(), 'sw-admin-'));
      const created = await fresh.services.users.ensureBootstrapAdmin(dir);
      expect(created?.path).toBe(join(dir, 'admin-password'));
      expect(statSync(created!.path).mode & 0o777).toBe(0o600);
      const password = /password: (\S+)/.exec(readFileSync(created!.path, 'utf8'))![1]!;
      expect(await fresh.services.users.ensureBootstrapAdmin(dir)).toBeNull();
      expect((await signIn(fresh, 'admin', password)).response.status).toBe(303);
      expect(fresh.logs.raw()).not.toContain(password);
      expect(fresh.logs.events('user.bootstrap_created')).toHaveLength(1);
      const reset = await fresh.services.users.resetPassword('admin');
      expect((await signIn(fresh, 'admin', password)).response.status).toBe(401);
      expect((await signIn(fresh, 'admin', reset)).response.status).toBe(303);
    } finally {
      await fresh.close();
    }
  });
});
