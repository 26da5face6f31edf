import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';
import { NO_INLINE_CODE, signIn, type SignedIn, withoutOwnStylesheet } from './signed-in.js';

const VALID: [string, string][] = [
  ['name', 'Nightly'],
  ['scope', 'tag'],
  ['tag', 'client-a'],
  ['kinds', 'plugins'],
  ['kinds', 'coreMinor'],
  ['days', 'mon'],
  ['days', 'thu'],
  ['start', '22:00'],
  ['end', '04:00'],
  ['timeZone', 'Europe/Berlin'],
  ['releaseDelayDays', '3'],
  ['pins', 'plugin woocommerce 8.9.3\n'],
  ['ignore', 'theme twentytwentyfour'],
  ['priority', '5'],
  ['safe', '1'],
  ['enabled', '1'],
];
const replaced = (changes: Record<string, string>): [string, string][] => [
  ...VALID.map(([name, value]): [string, string] => [name, changes[name] ?? value]),
  ...Object.entries(changes).filter(([name]) => !VALID.some(([field]) => field === name)),
];

describe('update policies in the dashboard', () => {
  let t: TestApp;
  let user: SignedIn;
  beforeEach(async () => {
    t = createTestApp();
    user = await signIn(t);
  });
  afterEach(() => t.close());

  it('creates, lists, edits and deletes a policy, which the API then holds as the form said', async () => {
    const empty = await (await user.get('/updates/policies')).text();
    expect(withoutOwnStylesheet(empty)).not.toMatch(NO_INLINE_CODE);
    expect(empty).toContain('No policy yet');
    const form = await (await user.get('/updates/policies/new')).text();
    expect(withoutOwnStylesheet(form)).not.toMatch(NO_INLINE_CODE);
    expect(form).toMatch(/<label for="timeZone">Time zone<\/label>/);

    const created = await user.post('/updates/policies', VALID);
    expect(created.status).toBe(303);
    expect(await user.follow(created)).toContain('Policy Nightly created.');
    const [policy] = await t.services.updatePolicies.list();
    expect(policy).toMatchObject({ name: 'Nightly', tag: 'client-a', siteId: null, priority: 5 });
    expect(policy!.settings).toMatchObject({
      enabled: true,
      safe: true,
      releaseDelayDays: 3,
      kinds: { plugins: true, themes: false, translations: false, coreMinor: true, coreMajor: false },
      window: { days: ['mon', 'thu'], start: '22:00', end: '04:00', timeZone: 'Europe/Berlin' },
      pins: [{ type: 'plugin', slug: 'woocommerce', version: '8.9.3' }],
      ignore: [{ type: 'theme', slug: 'twentytwentyfour' }],
    });
    const list = await (await user.get('/updates/policies')).text();
    expect(list).toContain('mon, thu 22:00–04:00');
    expect(list).toContain('Europe/Berlin');

    // Edit: the form shows what is stored; a site's own time zone when emptied.
    const edit = await (await user.get(`/updates/policies/${policy!.id}`)).text();
    expect(edit).toContain('value="Europe/Berlin"');
    expect(edit).toContain('plugin woocommerce 8.9.3</textarea>');
    const saved = await user.post(
      `/updates/policies/${policy!.id}`,
      replaced({ timeZone: '', safe: '0', name: 'Nightly 2' }).filter(([name]) => name !== 'safe'),
    );
    expect(saved.status).toBe(303);
    expect(await t.services.updatePolicies.get(policy!.id)).toMatchObject({
      name: 'Nightly 2',
      tag: 'client-a',
      settings: { safe: false, window: { timeZone: null } },
    });

    // Delete asks for the box to be ticked.
    expect(await user.follow(await user.post(`/updates/policies/${policy!.id}/delete`, {}))).toContain(
      'Nothing deleted',
    );
    expect(await t.services.updatePolicies.list()).toHaveLength(1);
    await user.post(`/updates/policies/${policy!.id}/delete`, { confirm: 'yes' });
    expect(await t.services.updatePolicies.list()).toHaveLength(0);
  });

  it('shows each problem beside its field, keeps what was typed, and saves nothing', async () => {
    const refused = await user.post(
      '/updates/policies',
      replaced({
        name: '',
        timeZone: 'Mars/Olympus',
        start: '25:00',
        pins: 'plugin woocommerce\n',
        releaseDelayDays: '-1',
      }),
    );
    expect(refused.status).toBe(400);
    const page = await refused.text();
    expect(withoutOwnStylesheet(page)).not.toMatch(NO_INLINE_CODE);
    expect(page).toMatch(/role="alert"[^>]*>\s*The policy was not saved: 5 fields need a change/);
    expect(page).toMatch(/id="timeZone-error">✗ not a time zone/);
    expect(page).toMatch(/id="start-error">✗ a time is HH:MM/);
    expect(page).toMatch(/id="pins-error">✗ line 1: /);
    expect(page).toMatch(/id="releaseDelayDays-error">/);
    expect(page).toMatch(/id="name-error">/);
    expect(page).toMatch(/aria-describedby="timeZone-hint timeZone-error"/);
    expect(page).toContain('value="Mars/Olympus"');
    expect(await t.services.updatePolicies.list()).toHaveLength(0);

    // No day, and a site that does not exist: the form says so, never a 500.
    const noDays = await user.post(
      '/updates/policies',
      VALID.filter(([name]) => name !== 'days'),
    );
    expect(noDays.status).toBe(400);
    expect(await noDays.text()).toMatch(/id="days-error">/);
    const unknownSite = await user.post('/updates/policies', replaced({ scope: 'site', siteId: 'site_nope' }));
    expect(unknownSite.status).toBe(400);
    expect(await unknownSite.text()).toContain('no site has the id site_nope');

    // A second policy for the same tag is refused with the service's message.
    const siteId = insertConnectedSite(t, { tags: ['client-a'] });
    expect((await user.post('/updates/policies', VALID)).status).toBe(303);
    const twice = await user.post('/updates/policies', VALID);
    expect(twice.status).toBe(409);
    expect(await twice.text()).toContain('tag client-a already has a policy');
    const forSite = await user.post('/updates/policies', replaced({ scope: 'site', siteId }));
    expect(forSite.status).toBe(303);
    // Its page shows the dry run: the site it governs, its window and time zone, what it would do.
    const sitePolicy = (await t.services.updatePolicies.list()).find((policy) => policy.siteId === siteId)!;
    const preview = await (await user.get(`/updates/policies/${sitePolicy.id}`)).text();
    expect(preview).toContain('What it would do');
    expect(preview).toMatch(new RegExp(`href="/sites/${siteId}">http://127\\.0\\.0\\.1:\\d+</a>`));
    expect(preview).toMatch(/(open now<\/strong>, until|next:)\s+\d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    expect(preview).toMatch(/time zone Europe\/Berlin\s*\(the policy’s\)/);
    // The tag policy governs no connected site but this one, which has its own policy.
    const tagPolicy = (await t.services.updatePolicies.list()).find((policy) => policy.tag === 'client-a')!;
    expect(await (await user.get(`/updates/policies/${tagPolicy.id}`)).text()).toContain(
      'No connected site is governed',
    );
    expect((await user.get('/updates/policies/upol_nope')).status).toBe(404);
  });

  it('shows a version held after a rollback in the dry run, with its date and reason, and releases it', async () => {
    const siteId = insertConnectedSite(t, { tags: ['held'] });
    await t.services.inventories.write(siteId, {
      plugins: [
        {
          slug: 'forms',
          file: 'forms/forms.php',
          name: 'Forms',
          version: '1.0.0',
          status: 'active',
          update: { version: '1.1.0' },
        },
      ],
      themes: [],
      syncedAt: new Date(),
      extras: { databaseType: null, databaseVersion: null, timeZone: 'UTC', coreOffers: [], translations: [] },
    });
    expect(
      (await user.post('/updates/policies', replaced({ tag: 'held', releaseDelayDays: '0', pins: '' }))).status,
    ).toBe(303);
    const policy = (await t.services.updatePolicies.list()).find((p) => p.tag === 'held')!;
    t.services.events.emit('update.rolled-back', {
      siteId,
      safeUpdateId: 'supd_1',
      type: 'plugin',
      slug: 'forms',
      fromVersion: '1.0.0',
      toVersion: '1.1.0',
      reason: 'after-check-failed',
      message: 'the home page answered 500',
      durationMs: 4_000,
    });
    await new Promise((resolve) => setImmediate(resolve));
    const [hold] = await t.services.updatePolicies.holds.list({ siteId, state: 'held', limit: 10 });

    const preview = await (await user.get(`/updates/policies/${policy.id}`)).text();
    expect(withoutOwnStylesheet(preview)).not.toMatch(NO_INLINE_CODE);
    expect(preview).toMatch(/plugin forms → 1\.1\.0: held, rolled back\s+\d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    expect(preview).toContain('(after-check-failed: the home page answered 500)');
    const release = `/updates/policies/${policy.id}/holds/${hold!.id}/release`;
    expect(preview).toContain(`action="${release}"`);

    const released = await user.post(release, {});
    expect(released.status).toBe(303);
    expect(released.headers.get('location')).toBe(`/updates/policies/${policy.id}#policy-preview`);
    const after = await user.follow(released);
    expect(after).toContain('Released plugin forms 1.1.0');
    expect(after).not.toContain(': held,');
    expect(after).toMatch(/<td>\s*plugin forms → 1\.1\.0\s*<\/td>/);
    expect((await t.services.updatePolicies.holds.get(hold!.id)).releasedBy).toEqual({
      kind: 'user',
      id: expect.stringMatching(/^usr_/),
    });
    // Twice, or a hold that does not exist: the page says so, never a 500.
    expect(await user.follow(await user.post(release, {}))).toContain('was released already');
    const unknown = await user.post(`/updates/policies/${policy.id}/holds/hold_nope/release`, {});
    expect(unknown.status).toBe(303);
    expect(await user.follow(unknown)).toContain('no update hold has the id hold_nope');
    // Without the CSRF field nothing is released.
    expect((await user.post(release, {}, false)).status).toBe(403);
  });
});
