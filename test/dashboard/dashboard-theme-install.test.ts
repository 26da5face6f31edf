import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';
import { signIn, type SignedIn } from './signed-in.js';

const flashOf = (page: string) => /class="flash ([a-z]+)"[^>]*>\s*([^<]*?)\s*</.exec(page)?.slice(1, 3);

/** The overview's ticked sites: install a theme from the theme directory, beside Install plugin. */
describe('dashboard: install a theme on the overview’s ticked sites', () => {
  let t: TestApp;
  let user: SignedIn;
  let a: string, b: string;

  beforeEach(async () => {
    t = createTestApp();
    user = await signIn(t);
    // Sites at loopback ports nothing listens on: each site's operation fails fast, as its result says.
    a = insertConnectedSite(t, { name: 'Site A' });
    b = insertConnectedSite(t, { name: 'Site B' });
  });
  afterEach(() => t.close());

  const jobs = () => t.services.jobs.list({ kind: 'fleet-action', limit: 10 });

  it('offers Install theme in the selection form, with its own slug field and activate box', async () => {
    const overview = await (await user.get('/')).text();
    const form = /<form[^>]*id="site-selection"[\s\S]*?<\/form>/.exec(overview)?.[0] ?? '';
    expect(form).toContain('name="_csrf"');
    expect(form).toContain('value="install-theme"');
    expect(form).toContain('name="theme"');
    expect(form).toContain('name="activate-theme"');
    expect(form).toContain('value="install-plugin"');
  });

  it('refuses a post without the CSRF token, and starts nothing', async () => {
    const refused = await user.post(
      '/sites/selection',
      [
        ['site', a],
        ['theme', 'twentytwentyfour'],
        ['action', 'install-theme'],
        ['back', '/'],
      ],
      false,
    );
    expect(refused.status).toBe(403);
    expect(await jobs()).toHaveLength(0);
  });

  it('refuses a malformed slug with a message, and starts nothing', async () => {
    const bad = await user.post('/sites/selection', [
      ['site', a],
      ['theme', '../etc'],
      ['action', 'install-theme'],
      ['back', '/'],
    ]);
    expect(bad.headers.get('location')).toBe('/');
    expect(flashOf(await user.follow(bad))).toEqual(['error', expect.stringMatching(/^Not a theme slug: /)]);
    expect(await jobs()).toHaveLength(0);
  });

  it('starts a fleet action installing the theme on the ticked sites as the signed-in user', async () => {
    const started = await user.post('/sites/selection', [
      ['site', a],
      ['site', b],
      ['theme', 'sitewarden-demo-theme'],
      ['activate-theme', 'yes'],
      // The plugin's fields beside it are not the theme's.
      ['plugin', 'akismet'],
      ['action', 'install-theme'],
      ['back', '/'],
    ]);
    expect(started.status).toBe(303);
    const location = started.headers.get('location')!;
    expect(location).toMatch(/^\/fleet\/actions\/fact_/);
    expect(flashOf(await user.follow(started))).toEqual(['ok', 'Installing sitewarden-demo-theme on 2 sites.']);
    expect(JSON.parse((await jobs())[0]!.params)).toMatchObject({
      action: 'install',
      type: 'theme',
      slug: 'sitewarden-demo-theme',
      activate: true,
      requestedBy: { kind: 'user', id: expect.any(String) },
    });
    await t.services.fleetActions.idle();
    const view = await t.services.fleetActions.get((await jobs())[0]!.id);
    expect(view.counts).toMatchObject({ total: 2, done: 2, failed: 2 });
    const results = await (await user.get(location)).text();
    expect(results).toContain('sitewarden-demo-theme');
  });

  it('installs without activating unless its own box is ticked', async () => {
    await user.post('/sites/selection', [
      ['site', a],
      ['theme', 'sitewarden-demo-theme'],
      // The plugin's activate box does not activate the theme.
      ['activate', 'yes'],
      ['action', 'install-theme'],
      ['back', '/'],
    ]);
    expect(JSON.parse((await jobs())[0]!.params)).toMatchObject({ type: 'theme', activate: false });
    await t.services.fleetActions.idle();
  });
});
