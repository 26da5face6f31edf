import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AUDIT_REPORT_POLICY } from '../../src/performance/report-response.js';
import { createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';
import { signIn, type SignedIn } from './signed-in.js';

const flashOf = (page: string) => /class="flash [a-z]+"[^>]*>\s*([^<]*?)\s*</.exec(page)?.[1];

/** A site's connection in the dashboard: approval pages, the callback's landing, disconnect and refresh. */
describe('dashboard: connecting and disconnecting sites', () => {
  let t: TestApp;
  let user: SignedIn;

  beforeEach(async () => {
    t = createTestApp();
    user = await signIn(t);
  });
  afterEach(() => t.close());

  const pendingSite = (expiresInMs = 60 * 60_000) => {
    const url = 'http://127.0.0.1:9/';
    const authorizationUrl = `${url}wp-admin/authorize-application.php?app_name=Sitewarden&success_url=x`;
    return {
      id: insertConnectedSite(t, {
        url,
        state: 'pending',
        username: null,
        credentialSealed: null,
        connectedAt: null,
        authorizationUrl,
        authorizationExpiresAt: new Date(t.clock.now().getTime() + expiresInMs),
      }),
      authorizationUrl,
    };
  };

  it('sends the browser on to the site’s approval page from a page of its own, which the CSP allows', async () => {
    const { id, authorizationUrl } = pendingSite();
    const approve = await user.get(`/sites/${id}/approve`);
    expect(approve.status).toBe(200);
    // A navigation, not a form's redirect: form-action 'self' does not govern it.
    expect(approve.headers.get('refresh')).toBe(`0; url=${authorizationUrl}`);
    expect(await approve.text()).toContain('Continue to the approval page');
  });

  it('shows a pending site as a page with the approval page again and cancel; cancel removes it', async () => {
    const { id } = pendingSite();
    const response = await user.get(`/sites/${id}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const page = await response.text();
    expect(page).toContain('Waiting for approval');
    expect(page).toContain(`href="/sites/${id}/approve"`);
    expect(page).toContain('Cancel the connection');

    const cancelled = await user.post(`/sites/${id}/disconnect`, { confirm: 'yes' });
    expect(cancelled.status).toBe(303);
    expect(await user.follow(cancelled)).toContain('Removed http://127.0.0.1:9/ from Sitewarden.');
    expect((await user.get(`/sites/${id}`)).status).toBe(404);
  });

  it('says when a pending site’s approval window has passed, and sends /approve back to the site', async () => {
    const { id } = pendingSite(-1);
    expect(await (await user.get(`/sites/${id}`)).text()).toContain('The approval window has passed');
    const approve = await user.get(`/sites/${id}/approve`);
    expect(approve.status).toBe(303);
    expect(approve.headers.get('location')).toBe(`/sites/${id}`);
  });

  it('never leaves the application password in the address bar: the callback sends browsers to a clean result page', async () => {
    const callback = await t.app.request(
      '/api/authorization/callback?state=nope&site_url=http://x&user_login=admin&password=abcd%20efgh',
      { headers: { accept: 'text/html' } },
    );
    expect(callback.status).toBe(303);
    const location = callback.headers.get('location')!;
    expect(location).toBe('/connect/result?problem=authorization-unknown');
    const result = await t.app.request(location);
    expect(result.status).toBe(400);
    const page = await result.text();
    expect(page).toContain('This approval link is unknown or was already used');
    expect(page).not.toContain('abcd');
    // Other clients still get the problem document.
    const json = await t.app.request('/api/authorization/callback?state=nope', { headers: { accept: '*/*' } });
    expect(json.headers.get('content-type')).toBe('application/problem+json');
  });

  it('lands on a styled page that names the connected site and links to it', async () => {
    const id = insertConnectedSite(t, { url: 'http://127.0.0.1:10/' });
    const result = await t.app.request(`/connect/result?site=${id}`);
    expect(result.status).toBe(200);
    const page = await result.text();
    expect(page).toContain('<strong>http://127.0.0.1:10/</strong> is now connected to Sitewarden.');
    expect(page).toContain(`href="/sites/${id}"`);
    expect(page).toContain('<style>');
    // An unknown id says nothing about any site.
    expect((await t.app.request('/connect/result?site=site_nope')).status).toBe(404);
  });

  it('disconnects a connected site after confirmation, and refreshes one site or the fleet', async () => {
    const id = insertConnectedSite(t, { url: 'http://127.0.0.1:11/' });
    const page = await (await user.get(`/sites/${id}`)).text();
    expect(page).toContain('Refresh now');
    expect(page).toContain('Disconnect');

    // The confirmation box is required by the browser; a missing one is refused by nothing on the
    // server but CSRF, so the form's `required` carries it: check the form has it.
    expect(page).toMatch(/action="\/sites\/[^"]+\/disconnect">[\s\S]*?required/);

    const refreshed = await user.post(`/sites/${id}/refresh`, {});
    expect(await user.follow(refreshed)).toContain('Reading the site’s plugins, themes and updates again');
    const fleet = await user.post('/sites/refresh', {});
    expect(flashOf(await user.follow(fleet))).toBe(
      'Reading 1 connected site again (plugins, themes, updates offered).',
    );

    const gone = await user.post(`/sites/${id}/disconnect`, { confirm: 'yes' });
    expect(await user.follow(gone)).toContain('Removed http://127.0.0.1:11/ from Sitewarden.');
    expect(await t.services.sitesRepository.findById(id)).toBeUndefined();
    // Without the CSRF field nothing happens.
    const other = insertConnectedSite(t);
    expect((await user.post(`/sites/${other}/disconnect`, { confirm: 'yes' }, false)).status).toBe(403);
    expect(await t.services.sitesRepository.findById(other)).toBeDefined();
  });

  it('opens a Lighthouse report as a page, sandboxed, served as the API serves it', async () => {
    const id = insertConnectedSite(t);
    const html = '<!doctype html><html><title>Lighthouse Report</title><script>1</script></html>';
    vi.spyOn(t.services.performance, 'report').mockResolvedValue(gzipSync(html));
    const path = `/sites/${id}/audits/audit_1/report`;

    const gzipped = await t.app.request(path, { headers: { cookie: user.cookie, 'accept-encoding': 'gzip, br' } });
    expect(gzipped.status).toBe(200);
    expect(gzipped.headers.get('content-encoding')).toBe('gzip');
    expect(gzipSync(html).equals(Buffer.from(await gzipped.arrayBuffer()))).toBe(true);
    // The report's own policy, not the dashboard's (which would stop its inline scripts).
    expect(gzipped.headers.get('content-security-policy')).toBe(AUDIT_REPORT_POLICY);

    const plain = await t.app.request(path, { headers: { cookie: user.cookie } });
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect(await plain.text()).toBe(html);
  });
});
