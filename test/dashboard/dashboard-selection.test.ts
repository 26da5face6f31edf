import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';
import { signIn, type SignedIn } from './signed-in.js';

const flashOf = (page: string) => /class="flash ([a-z]+)"[^>]*>\s*([^<]*?)\s*</.exec(page)?.slice(1, 3);

/** The overview's ticked sites: back up now, refresh, add and remove a tag, in one form. */
describe('dashboard: actions on the ticked sites of the overview', () => {
  let t: TestApp;
  let user: SignedIn;

  beforeEach(async () => {
    t = createTestApp();
    user = await signIn(t);
  });
  afterEach(() => t.close());

  const act = async (form: [string, string][]) => {
    const response = await user.post('/sites/selection', [...form, ['back', '/?q=Site']]);
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/?q=Site');
    return flashOf(await user.follow(response));
  };

  it('gives every row a checkbox of one form with the actions', async () => {
    const id = insertConnectedSite(t, { name: 'Site A' });
    const page = await (await user.get('/')).text();
    expect(page).toContain(`form="site-selection" name="site" value="${id}" aria-label="Select Site A"`);
    expect(page).toMatch(/<form[^>]*id="site-selection"[^>]*action="\/sites\/selection"/);
    for (const label of ['Back up now', 'Refresh now', 'Add tag', 'Remove tag']) expect(page).toContain(label);
  });

  it('adds and removes a tag on the ticked sites only', async () => {
    const [a, b, c] = ['Site A', 'Site B', 'Site C'].map((name) => insertConnectedSite(t, { name, tags: ['blog'] }));
    expect(
      await act([
        ['site', a!],
        ['site', b!],
        ['tag', 'Client-X'],
        ['action', 'add-tag'],
      ]),
    ).toEqual(['ok', 'Tagged 2 sites client-x.']);
    const tags = await t.services.sites.tagsOf([a!, b!, c!]);
    expect([tags.get(a!), tags.get(b!), tags.get(c!)]).toEqual([['blog', 'client-x'], ['blog', 'client-x'], ['blog']]);
    expect(
      await act([
        ['site', a!],
        ['tag', 'blog'],
        ['action', 'remove-tag'],
      ]),
    ).toEqual(['ok', 'Removed blog from 1 site.']);
    expect((await t.services.sites.tagsOf([a!])).get(a!)).toEqual(['client-x']);
    expect(
      await act([
        ['site', a!],
        ['tag', 'bad tag!'],
        ['action', 'add-tag'],
      ]),
    ).toEqual(['error', expect.stringMatching(/^Not a tag: /)]);
  });

  it('starts a backup of each ticked site and says which could not start', async () => {
    const [a, b] = ['Site A', 'Site B'].map((name) => insertConnectedSite(t, { name }));
    expect(
      await act([
        ['site', a!],
        ['action', 'backup'],
      ]),
    ).toEqual(['ok', 'Backups started on 1 site; each shows on its site’s page as it runs.']);
    // The same site again: its backup is queued already, said so; the other starts.
    const again = await act([
      ['site', a!],
      ['site', b!],
      ['action', 'backup'],
    ]);
    expect(again?.[0]).toBe('error');
    expect(again?.[1]).toMatch(/^Backups started on 1 site; .* Not started: .*already queued or running/);
  });

  it('refuses nothing ticked, an unknown action, and sites that are gone, with a message, never a 500', async () => {
    const a = insertConnectedSite(t, { name: 'Site A' });
    expect(await act([['action', 'backup']])).toEqual(['error', 'Tick one or more sites first.']);
    expect(
      await act([
        ['site', a],
        ['action', 'explode'],
      ]),
    ).toEqual(['error', 'Choose what to do with the ticked sites.']);
    expect(
      await act([
        ['site', 'site_gone'],
        ['action', 'refresh'],
      ]),
    ).toEqual(['error', 'None of the ticked sites exists any more.']);
    // A `back` outside the overview is not followed.
    const elsewhere = await user.post('/sites/selection', [
      ['action', 'refresh'],
      ['back', '//evil.example'],
    ]);
    expect(elsewhere.headers.get('location')).toBe('/');
  });

  it('names sites by their name in Activity, not by id', async () => {
    const a = insertConnectedSite(t, { name: 'Site Alpha' });
    await act([
      ['site', a],
      ['action', 'backup'],
    ]);
    const activity = await (await user.get('/activity')).text();
    expect(activity).toContain(`<a href="/sites/${a}">Site Alpha</a>`);
  });
});
