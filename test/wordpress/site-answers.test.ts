import { afterEach, describe, expect, it } from 'vitest';
import { fakePlugin, startFakeWordPress } from '../support/fake-wordpress/index.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/**
 * Every answer Sitewarden reads from a site (outside backups) is checked against the shape it
 * needs: a site answering valid JSON of the wrong shape gets a 502 `site-invalid-response`
 * naming the route, never a 500, and never a half-understood success.
 */

let t: TestApp;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
  await t?.close();
});

type Answers = NonNullable<Parameters<typeof startFakeWordPress>[0]>['answers'];

async function fakeSite(answers: Answers = {}) {
  const site = await startFakeWordPress({ answers });
  closers.push(site.close);
  t = createTestApp();
  return site;
}

const connectWithPassword = (url: string) =>
  t.call('POST', '/api/sites', {
    json: { url, username: 'admin', applicationPassword: 'abcd efgh ijkl mnop qrst uvwx' },
  });

async function connected(answers: Answers = {}) {
  const site = await fakeSite(answers);
  const answer = await connectWithPassword(site.url);
  expect(answer.status, answer.text).toBe(201);
  return { site, id: answer.json.id as string };
}

function expectInvalidAnswerFrom(
  answer: { status: number; json: { type: string; route?: string; detail: string } },
  route: string,
) {
  expect(answer.status, JSON.stringify(answer.json)).toBe(502);
  expect(answer.json.type).toBe('/problems/site-invalid-response');
  expect(answer.json.detail).toContain(route);
}

describe('connecting checks what the site says about itself and its user', () => {
  it.each([
    ['an empty object', {}],
    ['an array', []],
    [
      'capabilities without a user',
      {
        capabilities: {
          activate_plugins: true,
          install_plugins: true,
          update_plugins: true,
          delete_plugins: true,
          switch_themes: true,
          update_themes: true,
          delete_themes: true,
        },
      },
    ],
    ['a user id that is a string', { id: '1', slug: 'admin', name: 'Admin' }],
  ])('refuses a users/me answer that is %s, and connects nothing', async (_, usersMe) => {
    const site = await fakeSite({ 'GET wp/v2/users/me': usersMe });
    expectInvalidAnswerFrom(await connectWithPassword(site.url), 'wp/v2/users/me');
    expect((await t.call('GET', '/api/sites')).json.items).toEqual([]);
  });

  it('refuses an application-password introspection of the wrong shape', async () => {
    const site = await fakeSite({ 'GET wp/v2/users/me/application-passwords/introspect': { uuid: { nested: true } } });
    expectInvalidAnswerFrom(await connectWithPassword(site.url), 'wp/v2/users/me/application-passwords/introspect');
  });

  it('still connects a WordPress without introspection (it answers no route)', async () => {
    const site = await fakeSite();
    delete site.answers['GET wp/v2/users/me/application-passwords/introspect'];
    expect((await connectWithPassword(site.url)).status).toBe(201);
  });

  it.each([
    ['a name that is a number', { name: 5, home: 'HOME', namespaces: ['wp/v2'] }],
    ['a home that is not an http(s) URL', { name: 'x', home: 'javascript:alert(1)', namespaces: ['wp/v2'] }],
    [
      'application passwords described by a string',
      { name: 'x', home: 'HOME', namespaces: ['wp/v2'], authentication: { 'application-passwords': 'yes' } },
    ],
  ])('refuses a REST index with %s', async (_, index) => {
    const site = await fakeSite();
    site.answers.index = JSON.parse(JSON.stringify(index).replace('HOME', site.url));
    expectInvalidAnswerFrom(await t.call('POST', '/api/sites', { json: { url: site.url } }), '/wp-json/');
  });
});

describe('plugin and theme answers', () => {
  it.each([
    ['an object', { plugins: [] }],
    ['entries without a plugin file', [{ name: 'x', status: 'active', version: '1' }]],
    [
      'a plugin file that climbs out of the plugins folder',
      [{ plugin: '../../wp-config', name: 'x', status: 'active', version: '1' }],
    ],
  ])('refuses a plugin list that is %s', async (_, list) => {
    const { site, id } = await connected();
    site.answers['GET wp/v2/plugins'] = list;
    expectInvalidAnswerFrom(await t.call('GET', `/api/sites/${id}/plugins`), 'wp/v2/plugins');
  });

  it('refuses a theme list of the wrong shape', async () => {
    const { site, id } = await connected();
    site.answers['GET wp/v2/themes'] = [{ stylesheet: 7, status: 'active', name: 'x', version: '1' }];
    expectInvalidAnswerFrom(await t.call('GET', `/api/sites/${id}/themes`), 'wp/v2/themes');
  });

  it('refuses an install answer of the wrong shape', async () => {
    const { site, id } = await connected();
    site.answers['POST wp/v2/plugins'] = { success: true };
    expectInvalidAnswerFrom(
      await t.call('POST', `/api/sites/${id}/plugins/install`, { json: { slug: 'classic-editor' } }),
      'wp/v2/plugins',
    );
  });

  it('refuses activate and deactivate answers of the wrong shape', async () => {
    const { site, id } = await connected();
    site.answers['POST wp/v2/plugins/hello-dolly/hello-dolly'] = [];
    expectInvalidAnswerFrom(
      await t.call('POST', `/api/sites/${id}/plugins/hello-dolly/activate`),
      'wp/v2/plugins/hello-dolly/hello-dolly',
    );
    site.answers['POST wp/v2/plugins/akismet/akismet'] = { plugin: 'akismet/akismet', status: 'inactive' };
    expectInvalidAnswerFrom(
      await t.call('POST', `/api/sites/${id}/plugins/akismet/deactivate`),
      'wp/v2/plugins/akismet/akismet',
    );
  });

  it('refuses a delete answer of the wrong shape, and a delete the site says it did not do', async () => {
    const { site, id } = await connected();
    site.answers['DELETE wp/v2/plugins/hello-dolly/hello-dolly'] = 'deleted';
    expectInvalidAnswerFrom(
      await t.call('DELETE', `/api/sites/${id}/plugins/hello-dolly`),
      'wp/v2/plugins/hello-dolly/hello-dolly',
    );
    site.answers['DELETE wp/v2/plugins/hello-dolly/hello-dolly'] = { deleted: false };
    const refused = await t.call('DELETE', `/api/sites/${id}/plugins/hello-dolly`);
    expect(refused.status).toBe(502);
    expect(refused.json.type).toBe('/problems/site-operation-failed');
  });
});

describe('connector answers', () => {
  it('refuses connector info of the wrong shape', async () => {
    const { site, id } = await connected();
    site.answers['GET sitewarden/v1/info'] = { connector: ['1.2.0'], wordpress: '6.6', php: '8.3' };
    await t.services.sync.syncNow(id).catch(() => undefined);
    expect((await t.call('GET', `/api/sites/${id}`)).json.status.syncError).toContain('sitewarden/v1/info');
    // An operation the stored connector version covers goes straight to its route; a route gone has the info read.
    delete site.answers['POST sitewarden/v1/plugins/update'];
    expectInvalidAnswerFrom(await t.call('POST', `/api/sites/${id}/plugins/akismet/update`), 'sitewarden/v1/info');
  });

  it('records an update list of the wrong shape as the sync failure', async () => {
    const { id } = await connected({ 'GET sitewarden/v1/updates': { checkedAt: 12, plugins: 'none' } });
    const status = (await t.call('GET', `/api/sites/${id}`)).json.status;
    expect(status.lastSyncedAt).toBeNull();
    expect(status.syncError).toContain('sitewarden/v1/updates');
  });

  it.each([
    ['plugins/update', 'POST', '/plugins/akismet/update', 200],
    ['themes/update', 'POST', '/themes/twentytwentythree/update', 200],
    ['themes/activate', 'POST', '/themes/twentytwentythree/activate', 200],
    ['themes/delete', 'DELETE', '/themes/twentytwentythree', 204],
  ])('refuses a %s answer of the wrong shape', async (route, method, path, goodStatus) => {
    const { site, id } = await connected();
    expect((await t.call(method, `/api/sites/${id}${path}`)).status).toBe(goodStatus);
    site.answers[`POST sitewarden/v1/${route}`] = { ok: 1 };
    expectInvalidAnswerFrom(await t.call(method, `/api/sites/${id}${path}`), `sitewarden/v1/${route}`);
  });
});

describe('the authorize-application URL a site names', () => {
  it.each([
    ['a javascript: URL', () => 'javascript:alert(document.cookie)'],
    ['a data: URL', () => 'data:text/html,<script>alert(1)</script>'],
    ['a page on another host', () => 'https://login.example.com/wp-admin/authorize-application.php'],
    [
      'a page with credentials in it',
      (host: string) => host.replace('http://', 'http://user:pw@') + '/wp-admin/authorize-application.php',
    ],
  ])('is refused when it is %s, naming it', async (_, authorization) => {
    const site = await fakeSite();
    const url = authorization(site.url);
    site.answers.index = {
      name: 'Fake',
      home: site.url,
      namespaces: ['wp/v2'],
      authentication: { 'application-passwords': { endpoints: { authorization: url } } },
    };
    const answer = await t.call('POST', '/api/sites', { json: { url: site.url } });
    expectInvalidAnswerFrom(answer, 'authorize-application');
    expect(answer.json.authorizationUrl).toBe(url);
    expect((await t.call('GET', '/api/sites')).json.items).toEqual([]);
  });

  it('is passed on when it is an http(s) page of the site itself', async () => {
    const site = await fakeSite();
    const answer = await t.call('POST', '/api/sites', { json: { url: site.url } });
    expect(answer.status).toBe(202);
    expect(answer.json.authorizeUrl.startsWith(`${site.url}/wp-admin/authorize-application.php?`)).toBe(true);
  });
});

describe('a bounded inventory', () => {
  const manyPlugins = (count: number) =>
    Array.from({ length: count }, (_, i) => fakePlugin(`plugin-${String(i).padStart(6, '0')}`));

  it('refuses a site reporting more plugins than the cap, and the sync stores nothing of it', async () => {
    const { site, id } = await connected();
    site.answers['GET wp/v2/plugins'] = manyPlugins(10_000);
    const listed = await t.call('GET', `/api/sites/${id}/plugins`);
    expect(listed.status).toBe(502);
    expect(listed.json).toMatchObject({
      type: '/problems/site-inventory-too-large',
      kind: 'plugins',
      reported: 10_000,
      limit: 2_000,
    });

    await t.services.sync.syncNow(id);
    const detail = await t.call('GET', `/api/sites/${id}`);
    expect(detail.json.status.syncError).toMatch(/10000 plugins.*at most 2000/);
    expect(detail.json.inventory.plugins.total).toBe(2);
    expect(detail.text.length).toBeLessThan(10_000);
  });

  it('refuses a site reporting more themes than the cap', async () => {
    const { site, id } = await connected();
    site.answers['GET wp/v2/themes'] = Array.from({ length: 501 }, (_, i) => ({
      stylesheet: `theme-${i}`,
      status: 'inactive',
      name: `t${i}`,
      version: '1',
    }));
    const listed = await t.call('GET', `/api/sites/${id}/themes`);
    expect(listed.json).toMatchObject({ type: '/problems/site-inventory-too-large', kind: 'themes', limit: 500 });
  });

  it('answers a site’s detail with counts and the first 100 plugins; the paginated list has them all', async () => {
    const { id } = await connected({ 'GET wp/v2/plugins': manyPlugins(2_000).reverse() });
    const detail = (await t.call('GET', `/api/sites/${id}`)).json;
    expect(detail.plugins).toHaveLength(100);
    expect(detail.plugins[0].slug).toBe('plugin-000000');
    expect(detail.inventory).toEqual({
      plugins: { total: 2_000, list: `/api/sites/${id}/plugins` },
      themes: { total: 2, list: `/api/sites/${id}/themes` },
    });

    const slugs: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: { slug: string }[]; nextCursor: string | null } = (
        await t.call('GET', `${detail.inventory.plugins.list}?limit=200${cursor ? `&cursor=${cursor}` : ''}`)
      ).json;
      slugs.push(...page.items.map((plugin: { slug: string }) => plugin.slug));
      cursor = page.nextCursor;
    } while (cursor);
    expect(slugs).toHaveLength(2_000);
    expect(new Set(slugs).size).toBe(2_000);
  });

  it('pages through slugs of mixed case without skipping any', async () => {
    const { id } = await connected({
      'GET wp/v2/plugins': ['beta', 'Alpha', 'alpha', 'Zeta', 'gamma'].map((slug) => fakePlugin(slug)),
    });
    const slugs: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: { slug: string }[]; nextCursor: string | null } = (
        await t.call('GET', `/api/sites/${id}/plugins?limit=1${cursor ? `&cursor=${cursor}` : ''}`)
      ).json;
      slugs.push(...page.items.map((plugin: { slug: string }) => plugin.slug));
      cursor = page.nextCursor;
    } while (cursor);
    expect(slugs.sort()).toEqual(['Alpha', 'Zeta', 'alpha', 'beta', 'gamma']);
  });
});
