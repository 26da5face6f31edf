import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approveApplicationAuthorization, createTestSite, type TestSite } from '../support/wordpress/index.js';
import { startFakeSite } from '../support/fake-wordpress/index.js';
import { freePort, serveTestApp } from '../support/served-app.js';
import { createFakeClock, createTestApp, type TestApp } from '../support/test-app.js';

const FIXTURES = resolve(import.meta.dirname, '../support/fixtures/directory');

/** What WordPress itself holds, read inside the site, not through Sitewarden. */
async function applicationPasswordsOf(site: TestSite, username: string): Promise<{ uuid: string; name: string }[]> {
  const json = await site.php(`
    $user = get_user_by('login', ${JSON.stringify(username)});
    echo wp_json_encode(array_values(array_map(function ($item) { return array('uuid' => $item['uuid'], 'name' => $item['name']); }, WP_Application_Passwords::get_user_application_passwords($user->ID))));
  `);
  return JSON.parse(json) as { uuid: string; name: string }[];
}

async function installedPluginFiles(site: TestSite): Promise<string[]> {
  return JSON.parse(
    await site.php(
      `require_once ABSPATH . 'wp-admin/includes/plugin.php'; echo wp_json_encode(array_keys(get_plugins()));`,
    ),
  ) as string[];
}

async function basicAuthStatus(site: TestSite, username: string, password: string): Promise<number> {
  const response = await fetch(`${site.url}/wp-json/wp/v2/users/me`, {
    headers: { authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}` },
  });
  await response.arrayBuffer();
  return response.status;
}

describe('connecting sites with a username and application password', () => {
  let site: TestSite;
  let t: TestApp;
  const clock = createFakeClock(new Date());

  beforeAll(async () => {
    site = await createTestSite();
    t = createTestApp({ clock });
    await t.services.uptime.start(); // monitors sites as they connect (no ticks run here, so nothing is probed)
  });
  afterAll(async () => {
    await t?.close();
    await site?.stop();
  });

  it('connects, stores the credential encrypted, and shows the plugins and themes WordPress has', async () => {
    const { username, applicationPassword } = site.admin;
    const response = await t.call('POST', '/api/sites', {
      json: { url: `${site.url}/`, username, applicationPassword },
    });
    expect(response.status, response.text).toBe(201);
    expect(response.headers.get('location')).toBe(`/api/sites/${response.json.id}`);
    expect(response.json).toMatchObject({
      url: site.url,
      username,
      status: { connection: 'connected', syncError: null, uptime: { status: 'unknown', paused: false } },
    });

    const details = await t.call('GET', `/api/sites/${response.json.id}`, { token: t.readToken });
    expect(details.status).toBe(200);
    const files = await installedPluginFiles(site);
    expect(details.json.plugins.map((plugin: { file: string }) => plugin.file).sort()).toEqual(files.sort());
    expect(details.json.plugins).toContainEqual(
      expect.objectContaining({
        slug: 'akismet',
        file: 'akismet/akismet.php',
        status: 'inactive',
        version: expect.any(String),
      }),
    );
    const activeTheme = await site.option('stylesheet');
    expect(details.json.themes.map((theme: { slug: string }) => theme.slug)).toEqual(
      expect.arrayContaining(['twentytwentyone', 'twentytwentytwo', 'twentytwentythree']),
    );
    expect(
      details.json.themes
        .filter((theme: { status: string }) => theme.status === 'active')
        .map((theme: { slug: string }) => theme.slug),
    ).toEqual([activeTheme]);
    expect(details.json.status.lastSyncedAt).not.toBeNull();

    const list = await t.call('GET', '/api/sites');
    expect(list.json.items.map((item: { id: string }) => item.id)).toEqual([response.json.id]);

    const stored = JSON.stringify(t.database.sqlite.prepare('select * from sites').all());
    expect(stored).not.toContain(applicationPassword);
    expect(stored).not.toContain(applicationPassword.replace(/ /g, ''));
    expect(t.logs.raw()).not.toContain(applicationPassword);
    expect(t.logs.events('site.connected')).toEqual([
      expect.objectContaining({ siteId: response.json.id, mode: 'credentials', url: site.url }),
    ]);
  });

  it('refuses to connect the same site twice', async () => {
    const response = await t.call('POST', '/api/sites', {
      json: { url: site.url, username: site.admin.username, applicationPassword: site.admin.applicationPassword },
    });
    expect(response.status).toBe(409);
    expect(response.json.type).toBe('/problems/site-already-connected');
  });

  it('picks up plugins added on the site at the next scheduled sync', async () => {
    cpSync(
      join(FIXTURES, 'plugins/sitewarden-extra/2.0.0/sitewarden-extra'),
      join(site.root, 'wp-content/plugins/sitewarden-extra'),
      { recursive: true },
    );
    const [listed] = (await t.call('GET', '/api/sites')).json.items;
    expect(await t.services.sync.enqueueDue()).toBe(0);
    clock.advance(61 * 60_000);
    expect(await t.services.sync.enqueueDue()).toBe(1);
    await t.services.siteQueue.run(listed.id, async () => undefined);
    const details = await t.call('GET', `/api/sites/${listed.id}`);
    expect(details.json.plugins).toContainEqual(
      expect.objectContaining({ slug: 'sitewarden-extra', version: '2.0.0', status: 'inactive' }),
    );
  });

  it('records a sync that fails while the site errors, and its recovery once the site answers again', async () => {
    const [listed] = (await t.call('GET', '/api/sites')).json.items;
    const muPlugins = join(site.root, 'wp-content/mu-plugins');
    mkdirSync(muPlugins, { recursive: true });
    // The site's REST API answers every request with an error, as during a broken deploy.
    writeFileSync(
      join(muPlugins, 'broken-rest.php'),
      "<?php add_filter('rest_pre_dispatch', function () { return new WP_Error('broken', 'Broken deploy', array('status' => 500)); });\n",
    );
    try {
      await t.services.sync.syncNow(listed.id);
      const failed = await t.call('GET', `/api/sites/${listed.id}`);
      expect(failed.json.status.syncError).toEqual(expect.any(String));
      expect(t.logs.events('site.sync_failed')).toEqual([
        expect.objectContaining({
          level: 'warn',
          siteId: listed.id,
          url: site.url,
          reason: failed.json.status.syncError,
        }),
      ]);
    } finally {
      rmSync(join(muPlugins, 'broken-rest.php'));
    }
    await t.services.sync.syncNow(listed.id);
    const recovered = await t.call('GET', `/api/sites/${listed.id}`);
    expect(recovered.json.status.syncError).toBeNull();
    expect(t.logs.events('site.sync_recovered')).toEqual([
      expect.objectContaining({ level: 'info', siteId: listed.id, url: site.url }),
    ]);
  });

  it('disconnects: revokes the application password on the site and forgets the site', async () => {
    const { username, applicationPassword } = await site.createUser('administrator');
    const other = createTestApp();
    try {
      const connected = await other.call('POST', '/api/sites', {
        json: { url: site.url, username, applicationPassword },
      });
      expect(connected.status, connected.text).toBe(201);
      expect(await basicAuthStatus(site, username, applicationPassword)).toBe(200);
      const removed = await other.call('DELETE', `/api/sites/${connected.json.id}`);
      expect(removed.status).toBe(204);
      expect(await applicationPasswordsOf(site, username)).toEqual([]);
      expect(await basicAuthStatus(site, username, applicationPassword)).toBe(401);
      expect((await other.call('GET', `/api/sites/${connected.json.id}`)).status).toBe(404);
      expect(other.logs.events('site.disconnected')).toEqual([expect.objectContaining({ credentialRevoked: true })]);
    } finally {
      await other.close();
    }
  });
});

describe('refusing connections that cannot work', () => {
  let site: TestSite;
  let t: TestApp;
  beforeAll(async () => {
    site = await createTestSite();
    t = createTestApp({ config: { siteRequestTimeoutMs: 1_000 } });
  });
  afterAll(async () => {
    await t?.close();
    await site?.stop();
  });

  const connect = (json: Record<string, string>) => t.call('POST', '/api/sites', { json });

  it('says when the site rejects the credentials', async () => {
    const response = await connect({
      url: site.url,
      username: site.admin.username,
      applicationPassword: 'abcd efgh ijkl mnop qrst uvwx',
    });
    expect(response.status).toBe(422);
    expect(response.json.type).toBe('/problems/credentials-rejected');
  });

  it('says which capabilities a non-administrator lacks', async () => {
    const editor = await site.createUser('editor');
    const response = await connect({
      url: site.url,
      username: editor.username,
      applicationPassword: editor.applicationPassword,
    });
    expect(response.status).toBe(422);
    expect(response.json.type).toBe('/problems/insufficient-capabilities');
    expect(response.json.missingCapabilities).toEqual(
      expect.arrayContaining(['install_plugins', 'activate_plugins', 'switch_themes']),
    );
    expect((await t.call('GET', '/api/sites')).json.items).toEqual([]);
  });

  it('needs both username and application password, or neither', async () => {
    const response = await connect({ url: site.url, username: site.admin.username });
    expect(response.status).toBe(400);
    expect(response.json.type).toBe('/problems/incomplete-credentials');
  });

  it('says when an address is not WordPress', async () => {
    const fake = await startFakeSite((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Static</title>'),
    );
    try {
      const response = await connect({ url: fake.url });
      expect(response.status).toBe(422);
      expect(response.json.type).toBe('/problems/not-wordpress');
    } finally {
      await fake.close();
    }
  });

  it('says when a site cannot be reached or does not answer in time', async () => {
    const closed = await connect({ url: `http://127.0.0.1:${await freePort()}` });
    expect(closed.status).toBe(502);
    expect(closed.json.type).toBe('/problems/site-unreachable');
    const hanging = await startFakeSite(() => undefined);
    try {
      const response = await connect({ url: hanging.url });
      expect(response.status).toBe(504);
      expect(response.json.type).toBe('/problems/site-timeout');
    } finally {
      await hanging.close();
    }
  });

  it('refuses malformed URLs', async () => {
    for (const url of ['http://', 'mailto:someone@example.test', 'https://user:pass@example.test']) {
      const response = await connect({ url });
      expect(response.status, url).toBe(400);
      expect(response.json.type).toBe('/problems/invalid-site-url');
    }
  });
});

describe('sites without pretty permalinks or application passwords', () => {
  let plain: TestSite;
  let disabled: TestSite;
  let t: TestApp;
  beforeAll(async () => {
    [plain, disabled] = await Promise.all([
      createTestSite({ permalinks: 'plain' }),
      createTestSite({ applicationPasswords: false }),
    ]);
    t = createTestApp();
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all([plain?.stop(), disabled?.stop()]);
  });

  it('finds the REST API through ?rest_route= and connects', async () => {
    const response = await t.call('POST', '/api/sites', {
      json: { url: plain.url, username: plain.admin.username, applicationPassword: plain.admin.applicationPassword },
    });
    expect(response.status, response.text).toBe(201);
    expect(response.json.restUrl).toContain('rest_route=');
    expect(response.json.plugins.length).toBeGreaterThan(0);
    expect(response.json.themes.length).toBeGreaterThanOrEqual(3);
  });

  it('says when application passwords are turned off', async () => {
    const response = await t.call('POST', '/api/sites', { form: { url: disabled.url } });
    expect(response.status).toBe(422);
    expect(response.json.type).toBe('/problems/application-passwords-unavailable');
  });
});

describe('connecting through WordPress’s authorize-application screen', () => {
  let site: TestSite;
  /**
   * The site of the rejected, expired and mismatched authorizations: none of them changes what
   * WordPress holds (a rejection writes no application password, the others end in the daemon
   * before it reads the site), so one site serves the three, each with a connection of its own.
   */
  let other: TestSite;
  let daemon: Awaited<ReturnType<typeof serveTestApp>>;
  const clock = createFakeClock(new Date());
  beforeAll(async () => {
    [site, other] = await Promise.all([createTestSite(), createTestSite()]);
    daemon = await serveTestApp({ clock });
    await daemon.services.uptime.start();
  });
  afterAll(async () => {
    await daemon?.stop();
    await Promise.all([site?.stop(), other?.stop()]);
  });

  it('answers 202 with WordPress’s approval URL, and connects once an admin approves', async () => {
    const pending = await daemon.call('POST', `/api/sites?url=${encodeURIComponent(site.url)}`);
    expect(pending.status, pending.text).toBe(202);
    expect(pending.json.status.connection).toBe('pending');
    const authorizeUrl = new URL(pending.json.authorizeUrl);
    expect(`${authorizeUrl.origin}${authorizeUrl.pathname}`).toBe(`${site.url}/wp-admin/authorize-application.php`);
    expect(authorizeUrl.searchParams.get('app_name')).toBe('Sitewarden');
    expect(authorizeUrl.searchParams.get('app_id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(authorizeUrl.searchParams.get('success_url')).toMatch(
      new RegExp(`^${daemon.baseUrl}/api/authorization/callback\\?state=`),
    );

    const again = await daemon.call('POST', '/api/sites', { json: { url: site.url } });
    expect(again.status).toBe(409);
    expect(again.json.type).toBe('/problems/site-connection-pending');

    const approval = await approveApplicationAuthorization(site, pending.json.authorizeUrl);
    // The browser passed through the callback and stays on a result page whose address holds no password.
    const callbackUrl = approval.navigations.find((url) =>
      url.startsWith(`${daemon.baseUrl}/api/authorization/callback`),
    );
    expect(callbackUrl).toBeDefined();
    expect(approval.finalUrl).toBe(`${daemon.baseUrl}/connect/result?site=${pending.json.id}`);
    expect(approval.body).toContain('is now connected');

    const details = await daemon.call('GET', `/api/sites/${pending.json.id}`);
    expect(details.json).toMatchObject({
      status: { connection: 'connected', uptime: { status: expect.any(String) } },
      username: site.admin.username,
      authorization: null,
    });
    expect(details.json.themes.length).toBeGreaterThanOrEqual(3);
    const passwords = await applicationPasswordsOf(site, site.admin.username);
    expect(passwords.map((item) => item.name)).toContain('Sitewarden');

    const replay = await fetch(callbackUrl!, { headers: { accept: 'application/json' } });
    expect(replay.status).toBe(400);
    expect(((await replay.json()) as { type: string }).type).toBe('/problems/authorization-unknown');
    expect(daemon.logs.raw()).not.toMatch(/"password":"[^[]/);
  });

  it('records a rejection, and lets the operator start again', async () => {
    const pending = await daemon.call('POST', '/api/sites', { json: { url: other.url } });
    const rejection = await approveApplicationAuthorization(other, pending.json.authorizeUrl, { reject: true });
    expect(rejection.body).toContain('not approved');
    const details = await daemon.call('GET', `/api/sites/${pending.json.id}`);
    expect(details.json.status.connection).toBe('authorization_rejected');
    expect(daemon.logs.events('site.authorization_rejected')).toHaveLength(1);
    expect(await applicationPasswordsOf(other, other.admin.username)).toHaveLength(1); // only the test bed's own
    const retry = await daemon.call('POST', '/api/sites', { json: { url: other.url } });
    expect(retry.status).toBe(202);
    expect(retry.json.id).not.toBe(pending.json.id);
    expect((await daemon.call('DELETE', `/api/sites/${retry.json.id}`)).status).toBe(204);
  });

  it('expires an authorization nobody approved in time', async () => {
    const callbackFor = (authorizeUrl: string) => {
      const callback = new URL(new URL(authorizeUrl).searchParams.get('success_url')!);
      callback.searchParams.set('site_url', other.url);
      callback.searchParams.set('user_login', other.admin.username);
      callback.searchParams.set('password', other.admin.applicationPassword);
      return callback;
    };
    const late = await daemon.call('POST', '/api/sites', { json: { url: other.url } });
    clock.advance(61 * 60_000);
    const response = await fetch(callbackFor(late.json.authorizeUrl), { headers: { accept: 'application/json' } });
    expect(response.status).toBe(410);
    expect(((await response.json()) as { type: string }).type).toBe('/problems/authorization-expired');
    expect((await daemon.call('GET', `/api/sites/${late.json.id}`)).json.status.connection).toBe(
      'authorization_expired',
    );

    const forgotten = await daemon.call('POST', '/api/sites', { json: { url: other.url } });
    expect(forgotten.status).toBe(202);
    expect(await daemon.services.sites.expireAuthorizations()).toBe(0);
    clock.advance(61 * 60_000);
    expect(await daemon.services.sites.expireAuthorizations()).toBe(1);
    expect((await daemon.call('GET', `/api/sites/${forgotten.json.id}`)).json.status.connection).toBe(
      'authorization_expired',
    );
    expect(daemon.logs.events('site.authorization_expired')).toHaveLength(2);
    const afterTick = await fetch(callbackFor(forgotten.json.authorizeUrl), {
      headers: { accept: 'application/json' },
    });
    expect(afterTick.status).toBe(400);
  });

  it('refuses an approval that names another site', async () => {
    const pending = await daemon.call('POST', '/api/sites', { json: { url: other.url } });
    const callback = new URL(new URL(pending.json.authorizeUrl).searchParams.get('success_url')!);
    callback.searchParams.set('site_url', 'http://127.0.0.1:1');
    callback.searchParams.set('user_login', other.admin.username);
    callback.searchParams.set('password', other.admin.applicationPassword);
    const response = await fetch(callback, { headers: { accept: 'application/json' } });
    expect(response.status).toBe(422);
    expect(((await response.json()) as { type: string }).type).toBe('/problems/authorization-site-mismatch');
    expect((await daemon.call('GET', `/api/sites/${pending.json.id}`)).json.status.connection).toBe(
      'authorization_failed',
    );
  });
});
