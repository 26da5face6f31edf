import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Role } from '../../src/shared/actor.js';
import { createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';

const PASSWORD = 'correct horse battery staple';

/** A user of `role` signed in through the form: `get`, `post` (with the CSRF field) and the session cookie. */
async function signInAs(t: TestApp, username: string, role: Role, create = true, password = PASSWORD) {
  if (create) await t.services.users.create(username, password, role);
  const signedIn = await t.app.request('/sign-in', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username, password }).toString(),
  });
  expect(signedIn.status).toBe(303);
  const cookie = /sw_session=[^;]+/.exec(signedIn.headers.get('set-cookie')!)![0];
  const get = (path: string) => t.app.request(path, { headers: { cookie } });
  const csrf = /data-csrf="([^"]+)"/.exec(await (await get('/settings/account')).text())![1]!;
  const post = (path: string, form: Record<string, string>) =>
    t.app.request(path, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...form, _csrf: csrf }).toString(),
    });
  return { cookie, get, post };
}

describe('dashboard roles', () => {
  let t: TestApp;
  beforeEach(() => {
    t = createTestApp();
  });
  afterEach(() => t.close());

  it('refuses a viewer’s POST with a 403 page naming the role, and offers a viewer no action', async () => {
    const siteId = insertConnectedSite(t);
    const viewer = await signInAs(t, 'vera', 'viewer');
    for (const path of [`/sites/${siteId}/refresh`, '/settings/webhooks', `/sites/${siteId}/backups`]) {
      const refused = await viewer.post(path, { url: 'http://127.0.0.1:9', events: '*' });
      expect(refused.status, path).toBe(403);
      const refusal = await refused.text();
      expect(refusal, path).toMatch(/needs the (manager|owner) role; your account has the viewer role/);
      // In the dashboard's layout: its navigation and sign-out, not a bare page.
      expect(refusal, path).toContain('action="/sign-out"');
    }
    expect(await t.services.webhooks.list({ limit: 10 })).toHaveLength(0);
    const sitePage = await (await viewer.get(`/sites/${siteId}`)).text();
    expect(sitePage).not.toContain(`action="/sites/${siteId}/refresh"`);
    expect(sitePage).toMatch(/class="settings-form"[^>]*\shidden\s/);
    const settings = await (await viewer.get('/settings')).text();
    expect(settings).not.toContain('id="webhooks"');
    expect(settings).not.toContain('id="users"');
    expect(settings).toContain('<option value="viewer" selected>viewer</option>');
    expect(settings).not.toContain('<option value="manager"');
    // A viewer cannot download a backup either.
    expect((await viewer.get(`/sites/${siteId}/backups/bkp_x/download`)).status).toBe(403);

    // A manager's POST goes through (the refresh is queued and redirects back).
    const manager = await signInAs(t, 'mona', 'manager');
    expect((await manager.post(`/sites/${siteId}/refresh`, {})).status).toBe(303);
    expect((await manager.post('/settings/webhooks', { url: 'http://127.0.0.1:9', events: '*' })).status).toBe(403);
  });

  it('lets a client without scope tags see no site, and no page that does not filter by scope', async () => {
    const client = await signInAs(t, 'carl', 'client');
    const overview = await client.get('/');
    expect(overview.status).toBe(200);
    expect(await overview.text()).not.toContain('<strong>1</strong> sites');
    expect((await client.get('/updates/policies')).status).toBe(403);
    // The updates page filters by scope (site-scopes-lists.test.ts): with no tag, nothing is pending.
    expect(await (await client.get('/updates')).text()).toContain('Every site is up to date.');
    expect((await client.get('/settings')).status).toBe(200);
    expect((await client.get('/settings/account')).status).toBe(200);
  });

  it('lets every role sign out, a client limited to tags included', async () => {
    for (const role of ['client', 'viewer', 'manager', 'owner'] as const) {
      const user = await signInAs(t, `${role}-leaving`, role);
      const signedOut = await user.post('/sign-out', {});
      expect([signedOut.status, signedOut.headers.get('location')], role).toEqual([303, '/sign-in']);
      // The session is gone: its cookie leads back to the sign-in page.
      const after = await user.get('/settings/account');
      expect([after.status, after.headers.get('location')], role).toEqual([303, expect.stringMatching(/^\/sign-in/)]);
    }
  });

  it('lets every user change their own password, the current one first; their other sessions end', async () => {
    const here = await signInAs(t, 'vera', 'viewer');
    const elsewhere = await signInAs(t, 'vera', 'viewer', false);
    const wrong = await here.post('/settings/account/password', {
      current: 'not the password',
      password: 'a new long password',
    });
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain('the current password is not right');
    const changed = await here.post('/settings/account/password', {
      current: PASSWORD,
      password: 'a new long password',
    });
    expect([changed.status, changed.headers.get('location')]).toEqual([303, '/settings/account']);
    expect((await here.get('/settings/account')).status).toBe(200);
    expect((await elsewhere.get('/settings/account')).status).toBe(303);
    await signInAs(t, 'vera', 'viewer', false, 'a new long password');
    expect(t.logs.events('user.password_changed')).toHaveLength(1);
  });

  it('ends the sessions and event streams of a user whose role an owner changes', async () => {
    const owner = await signInAs(t, 'olga', 'owner');
    const vera = await signInAs(t, 'vera', 'viewer');
    const stream = (await vera.get('/events')).body!.getReader();
    const veraId = (await t.services.users.list()).find((u) => u.username === 'vera')!.id;
    const changed = await owner.post(`/settings/users/${veraId}/role`, { role: 'manager' });
    expect(changed.status).toBe(303);
    const ended = await Promise.race([
      (async () => {
        for (;;) if ((await stream.read()).done) return 'ended';
      })(),
      new Promise((resolve) => setTimeout(() => resolve('open'), 5_000)),
    ]);
    expect(ended).toBe('ended');
    expect((await vera.get('/settings/account')).status).toBe(303);
    expect((await t.services.users.find(veraId))!.role).toBe('manager');
    // The last owner keeps the role, said on the page.
    const olgaId = (await t.services.users.list()).find((u) => u.username === 'olga')!.id;
    await owner.post(`/settings/users/${olgaId}/role`, { role: 'viewer' });
    expect((await t.services.users.find(olgaId))!.role).toBe('owner');
  });
});
