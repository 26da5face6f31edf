import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeWordPress, type FakeWordPress } from '../support/fake-wordpress/index.js';
import { createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';

/** Tags group sites (`client:acme`, `staging`); the site list filters by them and by what a site runs. */
let t: TestApp;
const fakes: FakeWordPress[] = [];
beforeAll(() => {
  t = createTestApp();
});
afterAll(async () => {
  await t.close();
});
afterEach(async () => {
  while (fakes.length > 0) await fakes.pop()!.close();
});

const addSite = (fields: Parameters<typeof insertConnectedSite>[1] = {}) => insertConnectedSite(t, fields);

async function listIds(query: string): Promise<string[]> {
  const response = await t.call('GET', `/api/sites?${query}`, { token: t.readToken });
  expect(response.status, response.text).toBe(200);
  return response.json.items.map((site: { id: string }) => site.id);
}

describe('site tags', () => {
  it('are set on connect, normalised, shown on the site, and replaced with PUT', async () => {
    const site = await startFakeWordPress();
    fakes.push(site);
    const connected = await t.call('POST', '/api/sites', {
      json: {
        url: site.url,
        username: site.username,
        applicationPassword: site.applicationPassword,
        tags: ['Client:Acme', 'staging', 'client:acme'],
      },
    });
    expect(connected.status, connected.text).toBe(201);
    expect(connected.json.tags).toEqual(['client:acme', 'staging']);
    const id = connected.json.id as string;
    expect((await t.call('GET', `/api/sites/${id}`, { token: t.readToken })).json.tags).toEqual([
      'client:acme',
      'staging',
    ]);

    const replaced = await t.call('PUT', `/api/sites/${id}/tags`, { json: { tags: ['ecommerce', 'client:acme'] } });
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.json).toEqual({ tags: ['client:acme', 'ecommerce'] });
    const listed = await t.call('GET', `/api/sites?tag=ecommerce`, { token: t.readToken });
    expect(listed.json.items).toEqual([expect.objectContaining({ id, tags: ['client:acme', 'ecommerce'] })]);

    // Disconnecting removes the site's tags with it.
    expect((await t.call('DELETE', `/api/sites/${id}`)).status).toBe(204);
    expect(await listIds('tag=ecommerce')).toEqual([]);
  });

  it('refuses malformed tags, too many tags, and unknown sites, with problems', async () => {
    const id = addSite();
    for (const tags of [['has space'], ['-leading-dash'], ['x'.repeat(65)], ['ünïcode'], ['']]) {
      const response = await t.call('PUT', `/api/sites/${id}/tags`, { json: { tags } });
      expect(response.status, JSON.stringify(tags)).toBe(400);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
    }
    const tooMany = Array.from({ length: 33 }, (_, i) => `t${i}`);
    const refused = await t.call('PUT', `/api/sites/${id}/tags`, { json: { tags: tooMany } });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('at most 32 tags');
    const missing = await t.call('PUT', `/api/sites/site_nope/tags`, { json: { tags: ['a'] } });
    expect(missing.status).toBe(404);
    expect(missing.json.type).toContain('site-not-found');
    // A read token may look but not change.
    const readOnly = await t.call('PUT', `/api/sites/${id}/tags`, { json: { tags: ['a'] }, token: t.readToken });
    expect(readOnly.status).toBe(403);
    expect((await t.call('GET', `/api/sites/${id}`, { token: t.readToken })).json.tags).toEqual([]);
  });

  it('are counted across the fleet', async () => {
    addSite({ tags: ['count:a', 'count:b'] });
    addSite({ tags: ['count:a'] });
    const response = await t.call('GET', '/api/tags', { token: t.readToken });
    expect(response.status).toBe(200);
    expect(response.json.items).toEqual(
      expect.arrayContaining([
        { tag: 'count:a', sites: 2 },
        { tag: 'count:b', sites: 1 },
      ]),
    );
  });
});

describe('the site list filters', () => {
  it('by tags (all of them), by URL or name, and by versions, combined, page by page', async () => {
    const acmeShop = addSite({
      name: 'Acme Shop',
      wordpressVersion: '6.5.5',
      phpVersion: '8.2.7',
      tags: ['f:acme', 'f:shop'],
    });
    const acmeBlog = addSite({
      name: 'Acme 100%_Blog',
      wordpressVersion: '6.1.9',
      phpVersion: '8.2.7',
      tags: ['f:acme'],
    });
    const other = addSite({ name: 'Other', wordpressVersion: '6.5', phpVersion: '7.4.33', tags: ['f:shop'] });
    const nightly = addSite({
      name: 'Nightly',
      wordpressVersion: '6.7-alpha-58716',
      phpVersion: '8.3.1',
      tags: ['f:beta'],
    });

    expect(await listIds('tag=f:acme')).toEqual([acmeShop, acmeBlog]);
    expect(await listIds('tag=f:acme&tag=f:shop')).toEqual([acmeShop]);
    expect(await listIds('tag=F:SHOP')).toEqual([acmeShop, other]);
    expect(await listIds('q=acme')).toEqual([acmeShop, acmeBlog]);
    // LIKE's wildcards in the search are plain characters.
    expect(await listIds('q=100%25_')).toEqual([acmeBlog]);
    expect(await listIds('q=%25')).toEqual([acmeBlog]);
    expect(await listIds(`q=${encodeURIComponent((await t.services.sitesRepository.findById(other))!.url)}`)).toEqual([
      other,
    ]);
    // A version matches itself and the releases under it, never a longer number.
    expect(await listIds('tag=f:shop&wordpressVersion=6.5')).toEqual([acmeShop, other]);
    expect(await listIds('tag=f:acme&wordpressVersion=6.1')).toEqual([acmeBlog]);
    expect(await listIds('tag=f:acme&wordpressVersion=6.1.99')).toEqual([]);
    // What WordPress reports between releases: the pre-release itself, and under its release.
    expect(await listIds('wordpressVersion=6.7-alpha-58716')).toEqual([nightly]);
    expect(await listIds('wordpressVersion=6.7')).toEqual([nightly]);
    expect(await listIds('wordpressVersion=6.7-beta1')).toEqual([]);
    expect(await listIds('tag=f:acme&phpVersion=8.2&state=connected')).toEqual([acmeShop, acmeBlog]);
    expect(await listIds('tag=f:acme&state=pending')).toEqual([]);

    const first = await t.call('GET', '/api/sites?tag=f:acme&limit=1', { token: t.readToken });
    expect(first.json.items.map((site: { id: string }) => site.id)).toEqual([acmeShop]);
    const second = await t.call('GET', `/api/sites?tag=f:acme&limit=1&cursor=${first.json.nextCursor}`, {
      token: t.readToken,
    });
    expect(second.json.items.map((site: { id: string }) => site.id)).toEqual([acmeBlog]);
    expect(second.json.nextCursor).toBeNull();
  });

  it('refuses malformed filters with a problem', async () => {
    for (const query of ['tag=bad%20tag', 'wordpressVersion=latest', 'q=', `q=${'x'.repeat(201)}`]) {
      const response = await t.call('GET', `/api/sites?${query}`, { token: t.readToken });
      expect(response.status, query).toBe(400);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
    }
  });
});
