import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { CONTENT_SECURITY_POLICY } from '../../src/dashboard/security.js';
import { STYLESHEET_HASH } from '../../src/dashboard/stylesheet.js';
import { createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';
import { signIn, type SignedIn } from './signed-in.js';

describe('dashboard pages', () => {
  let t: TestApp;
  let user: SignedIn;

  const get = (path: string) => user.get(path);
  const post = (path: string, form: Record<string, string>, withCsrf = true) => user.post(path, form, withCsrf);
  const follow = (response: Response) => user.follow(response);

  beforeEach(async () => {
    t = createTestApp();
    user = await signIn(t);
  });
  afterEach(() => t.close());

  it('serves every page with the strict CSP and no inline script or style', async () => {
    const siteId = insertConnectedSite(t, { name: 'Alpha' });
    for (const path of [
      '/',
      `/sites/${siteId}`,
      '/activity',
      '/updates',
      '/updates/policies',
      '/updates/policies/new',
      '/updates/history',
      '/fleet/plugins',
      '/fleet/themes',
      '/backups',
      '/settings',
    ]) {
      const response = await get(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-security-policy'), path).toBe(CONTENT_SECURITY_POLICY);
      expect(response.headers.get('cache-control'), path).toBe('no-store');
      const page = await response.text();
      expect(page, path).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|\sstyle=|\son[a-z]+=/i);
      // One inline style: the dashboard's stylesheet, the one the CSP allows by its hash.
      const styles = [...page.matchAll(/<style[^>]*>([\s\S]*?)<\/style>/gi)].map(([, text]) => text!);
      expect(
        styles.map((text) => `sha256-${createHash('sha256').update(text).digest('base64')}`),
        path,
      ).toEqual([STYLESHEET_HASH]);
      for (const [, src] of page.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)) {
        expect((await t.app.request(src!)).status, src).toBe(200);
      }
    }
    expect((await get('/sites/site_nope')).status).toBe(404);
  });

  it('filters, searches, sorts and pages the overview on the server', async () => {
    for (let i = 0; i < 120; i++)
      insertConnectedSite(t, { name: `Site ${String(i).padStart(3, '0')}`, tags: i % 3 === 0 ? ['client-a'] : [] });
    const first = await (await get('/')).text();
    expect(first).toContain('120 of 120 sites, page 1 of 3');
    expect(first).toContain('Site 000');
    expect(first).not.toContain('Site 050');
    const third = await (await get('/?page=3')).text();
    expect(third).toContain('Site 119');
    expect(third).toMatch(/rel="prev"/);
    const tagged = await (await get('/?tag=client-a')).text();
    expect(tagged).toContain('40 of 120 sites');
    const searched = await (await get('/?q=Site+11')).text();
    expect(searched).toContain('10 of 120 sites');
    const sorted = await (await get('/?sort=name&dir=desc')).text();
    expect(sorted.indexOf('Site 119')).toBeLessThan(sorted.indexOf('Site 118'));
    expect(await (await get('/?updates=1')).text()).toContain('No site matches these filters.');
    // Junk in the query falls back to the defaults instead of failing.
    expect((await get('/?sort=evil&page=-4&status=nope')).status).toBe(200);
  });

  it('creates an API token shown once, which then works on /api, and revokes it', async () => {
    expect((await post('/settings/tokens', { name: 'ci', scope: 'read' }, false)).status).toBe(403);
    const created = await post('/settings/tokens', { name: 'ci', scope: 'read' });
    expect(created.status).toBe(201);
    const token = /class="secret-value">([^<]+)</.exec(await created.text())![1]!;
    expect((await t.call('GET', '/api/sites', { token })).status).toBe(200);
    const listed = await (await get('/settings')).text();
    expect(listed).not.toContain(token);
    const id = (await t.services.tokens.list()).find((row) => row.name === 'ci')!.id;
    const revoked = await post(`/settings/tokens/${id}/revoke`, {});
    expect(await follow(revoked)).toContain('Token ci revoked.');
    expect((await t.call('GET', '/api/sites', { token })).status).toBe(401);
  });

  it('adds a webhook, queues a test delivery and shows its log; refuses a bad one with a message', async () => {
    const bad = await post('/settings/webhooks', { url: 'http://127.0.0.1:9/hook', events: 'no.such_event' });
    expect(await follow(bad)).toContain('unknown event');
    const added = await post('/settings/webhooks', {
      url: 'http://127.0.0.1:9/hook',
      events: 'site.down, backup.failed',
    });
    expect(await follow(added)).toContain('Webhook added');
    const [webhook] = await t.services.webhooks.list({ limit: 10 });
    const tested = await post(`/settings/webhooks/${webhook!.id}/test`, {});
    expect(await follow(tested)).toContain('Test delivery queued');
    expect(await (await get(`/settings?deliveries=${webhook!.id}`)).text()).toContain('webhook.test');
    await post(`/settings/webhooks/${webhook!.id}/delete`, {});
    expect(await t.services.webhooks.list({ limit: 10 })).toHaveLength(0);
  });

  it('adds a user who can sign in, and resets a password', async () => {
    const short = await post('/settings/users', { username: 'bob', password: 'short' });
    expect(await follow(short)).toContain('12 to 1024 characters');
    await post('/settings/users', { username: 'Bob@Example.com', password: 'another long password' });
    const bob = (await t.services.users.list()).find((u) => u.username === 'bob@example.com')!;
    const reset = await post(`/settings/users/${bob.id}/reset`, {});
    const password = /class="secret-value">([^<]+)</.exec(await reset.text())![1]!;
    const signIn = await t.app.request('/sign-in', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username: 'bob@example.com', password }).toString(),
    });
    expect(signIn.status).toBe(303);
  });

  it('saves a site’s settings and tags, and turns invalid numbers into a message', async () => {
    const siteId = insertConnectedSite(t);
    const saved = await post(`/sites/${siteId}/settings`, {
      tags: 'Client-B, blog',
      intervalSeconds: '120',
      auditIntervalHours: '48',
      'backups.intervalHours': '12',
      'backups.keepLast': '5',
      'backups.keepDays': '7',
      backupsEnabled: '1',
    });
    expect(await follow(saved)).toContain('Settings saved.');
    expect((await t.services.sites.tagsOf([siteId])).get(siteId)).toEqual(['blog', 'client-b']);
    expect((await t.services.uptime.monitoringSettings(siteId)).intervalSeconds).toBe(120);
    expect(await t.services.backups.settings(siteId)).toMatchObject({ intervalHours: 12, keepLast: 5, keepDays: 7 });
    expect(await t.services.performance.settings(siteId)).toMatchObject({ intervalHours: 48, enabled: false });
    const invalid = await post(`/sites/${siteId}/settings`, { intervalSeconds: '3' });
    expect(await follow(invalid)).toMatch(/monitoring: /);
    expect((await t.services.uptime.monitoringSettings(siteId)).intervalSeconds).toBe(120);
  });

  it('keeps a site following its tag’s retention until a field is changed, and shows every retention field', async () => {
    const siteId = insertConnectedSite(t, { tags: ['client-c'] });
    await t.services.backups.retention.setTag('client-c', { keepLast: 7, keepWeekly: 4 });
    const page = await (await get(`/sites/${siteId}`)).text();
    for (const name of [
      'intervalHours',
      'keepLast',
      'keepDays',
      'keepDaily',
      'keepWeekly',
      'keepMonthly',
      'keepYearly',
    ])
      expect(page, name).toContain(`name="backups.${name}"`);
    expect(page).toMatch(/name="backups\.keepLast"\s+type="number"\s+min="1"\s+max="10000"\s+value="7"/);
    // The form sent back as shown (the tags saved, say): nothing of the retention is pinned on the site.
    const shown = Object.fromEntries(
      [...page.matchAll(/name="(backups\.[a-zA-Z]+(?:\.shown)?)"[^>]*value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]),
    );
    expect(
      await follow(await post(`/sites/${siteId}/settings`, { ...shown, tags: 'client-c', backupsEnabled: '1' })),
    ).toContain('Settings saved.');
    await t.services.backups.retention.setTag('client-c', { keepLast: 9, keepWeekly: 4 });
    expect(await t.services.backups.settings(siteId)).toMatchObject({ keepLast: 9, keepWeekly: 4 });
    // A changed field is the site's own; an emptied one follows the tag again.
    await post(`/sites/${siteId}/settings`, {
      ...shown,
      'backups.keepMonthly': '3',
      tags: 'client-c',
      backupsEnabled: '1',
    });
    expect(await t.services.backups.settings(siteId)).toMatchObject({ keepLast: 9, keepMonthly: 3 });
    await post(`/sites/${siteId}/settings`, {
      ...shown,
      'backups.keepMonthly': '',
      tags: 'client-c',
      backupsEnabled: '1',
    });
    expect(await t.services.backups.settings(siteId)).toMatchObject({ keepMonthly: 0 });
  });

  it('answers a refused site action with a message, not an error page', async () => {
    const siteId = insertConnectedSite(t);
    const restore = await post(`/sites/${siteId}/backups/bkp_missing/restore`, { confirm: 'yes' });
    expect(restore.status).toBe(303);
    expect(await follow(restore)).toContain('flash error');
    const unconfirmed = await post(`/sites/${siteId}/backups/bkp_missing/restore`, {});
    expect(await follow(unconfirmed)).toContain('tick the box');
  });
});
