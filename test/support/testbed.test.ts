import { randomUUID } from 'node:crypto';
import { cpSync, existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { approveApplicationAuthorization, createTestSite, type TestSite } from './wordpress/index.js';
import { defaultRelease } from './wordpress/releases.js';
import { phpString } from './wordpress/wp-config.js';

/**
 * Proves the integration test bed itself: real WordPress sites on loopback, the
 * plugin-directory mirror standing in for wordpress.org, no way out to the
 * internet, and a real browser approving an application-password request.
 */

const basicAuth = (username: string, applicationPassword: string) =>
  `Basic ${Buffer.from(`${username}:${applicationPassword}`).toString('base64')}`;

/** REST URL that works whatever the permalink setting. */
const restRoute = (site: TestSite, route: string, query = '') =>
  `${site.url}/?rest_route=${route}${query ? `&${query}` : ''}`;

async function getJson(
  url: string,
  init: RequestInit = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, init);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const PLUGIN_INSTALL = `require_once ABSPATH . 'wp-admin/includes/plugin-install.php';`;

describe('WordPress test bed', () => {
  let pretty: TestSite;
  let plain: TestSite;
  let withoutAppPasswords: TestSite;

  beforeAll(async () => {
    [pretty, plain, withoutAppPasswords] = await Promise.all([
      createTestSite({ permalinks: 'pretty' }),
      createTestSite({ permalinks: 'plain' }),
      createTestSite({ applicationPasswords: false }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([pretty, plain, withoutAppPasswords].map((site) => site?.stop()));
  });

  describe('sites', () => {
    it('start from a known wp-content whatever else Debian put beside WordPress (no languages, no extra plugins)', async () => {
      // wordpress-l10n (a Recommends of wordpress) fills /usr/share/wordpress/wp-content/languages on
      // many machines; a test site must not inherit it, or translation tests depend on the machine.
      const state = JSON.parse(
        await pretty.php(`
          require_once ABSPATH . 'wp-admin/includes/plugin.php';
          echo wp_json_encode( array(
            'languages' => get_available_languages(),
            'plugins'   => array_keys( get_plugins() ),
            'themes'    => array_keys( wp_get_themes() ),
          ) );
        `),
      ) as { languages: string[]; plugins: string[]; themes: string[] };
      expect(state.languages).toEqual([]);
      // What the release ships (the newest one adds Hello Dolly and Twenty Twenty-Four), nothing else.
      expect(['akismet/akismet.php', 'hello.php']).toEqual(expect.arrayContaining(state.plugins));
      expect(state.plugins).toContain('akismet/akismet.php');
      expect(['twentytwentyone', 'twentytwentytwo', 'twentytwentythree', 'twentytwentyfour']).toEqual(
        expect.arrayContaining(state.themes),
      );
      expect(state.themes).toEqual(expect.arrayContaining(['twentytwentyone', 'twentytwentytwo', 'twentytwentythree']));
    });

    it('serve the REST API at /wp-json/ with pretty permalinks and at ?rest_route= always', async () => {
      expect(pretty.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      for (const url of [`${pretty.url}/wp-json/`, `${pretty.url}/?rest_route=/`, `${plain.url}/?rest_route=/`]) {
        const { status, body } = await getJson(url);
        expect(status, url).toBe(200);
        expect(body['namespaces']).toContain('wp/v2');
      }
      // As under Apache: without pretty permalinks /wp-json/ is just the front page,
      // and the API is announced with its index.php?rest_route= address.
      const front = await fetch(`${plain.url}/wp-json/`);
      expect(front.headers.get('content-type')).toMatch(/^text\/html/);
      expect(front.headers.get('link')).toContain(`<${plain.url}/index.php?rest_route=/>; rel="https://api.w.org/"`);

      expect(await pretty.option('permalink_structure')).toBe('/%postname%/');
      expect(await plain.option('permalink_structure')).toBe('');
      expect(await plain.option('siteurl')).toBe(plain.url);
    });

    it('authenticate the admin with its application password', async () => {
      for (const site of [pretty, plain]) {
        const { status, body } = await getJson(restRoute(site, '/wp/v2/users/me', 'context=edit'), {
          headers: { authorization: basicAuth(site.admin.username, site.admin.applicationPassword) },
        });
        expect(status).toBe(200);
        expect(body['roles']).toContain('administrator');
      }
      expect(pretty.admin.applicationPassword).toMatch(/^([A-Za-z0-9]{4} ){5}[A-Za-z0-9]{4}$/);
    });

    it('create users with a role and their own application password', async () => {
      const editor = await pretty.createUser('editor');
      const { status, body } = await getJson(`${pretty.url}/wp-json/wp/v2/users/me?context=edit`, {
        headers: { authorization: basicAuth(editor.username, editor.applicationPassword) },
      });
      expect(status).toBe(200);
      expect(body['roles']).toEqual(['editor']);
    });

    it('can have application passwords switched off', async () => {
      const index = await getJson(`${withoutAppPasswords.url}/wp-json/`);
      expect(Object.keys(index.body['authentication'] as object)).not.toContain('application-passwords');
      expect(Object.keys((await getJson(`${pretty.url}/wp-json/`)).body['authentication'] as object)).toContain(
        'application-passwords',
      );

      const { admin } = withoutAppPasswords;
      const me = await getJson(`${withoutAppPasswords.url}/wp-json/wp/v2/users/me`, {
        headers: { authorization: basicAuth(admin.username, admin.applicationPassword) },
      });
      // WordPress 6.1 skips application-password authentication entirely when unavailable,
      // so the request is simply anonymous (no 'application_passwords_disabled' error).
      expect(me.status).toBe(401);
      expect(me.body['code']).toBe('rest_not_logged_in');
    });

    it('make a database imported from the run’s template their own: URL, title, permalinks, passwords', async () => {
      // The first site of the run made it (this file's, or an earlier file's).
      expect(existsSync(join(inject('testWorkDir'), 'site-templates', `${defaultRelease()}.sql`))).toBe(true);
      const copy = await createTestSite({ permalinks: 'plain' });
      try {
        expect(await copy.option('home')).toBe(copy.url);
        expect(await copy.option('siteurl')).toBe(copy.url);
        expect(await copy.option('permalink_structure')).toBe('');
        const title = await copy.option('blogname');
        expect(title).toMatch(/^Sitewarden test site [0-9a-f]{10}$/);
        expect(title).not.toBe(await pretty.option('blogname'));

        const passwordIsAdmins = (password: string) =>
          copy.php(`
            $admin = get_user_by( 'login', 'admin' );
            echo wp_check_password( ${phpString(password)}, $admin->user_pass, $admin->ID ) ? 'yes' : 'no';
            echo ' ', count( WP_Application_Passwords::get_user_application_passwords( $admin->ID ) );
          `);
        expect(await passwordIsAdmins(copy.admin.password)).toBe('yes 1');
        expect(await passwordIsAdmins(pretty.admin.password)).toBe('no 1');
        const me = (site: TestSite) =>
          fetch(restRoute(copy, '/wp/v2/users/me'), {
            headers: { authorization: basicAuth(site.admin.username, site.admin.applicationPassword) },
          });
        expect((await me(copy)).status).toBe(200);
        expect((await me(pretty)).status).toBe(401);
      } finally {
        await copy.stop();
      }
    });

    it('run PHP with WordPress loaded and report PHP failures', async () => {
      expect(await pretty.php('echo home_url();')).toBe(pretty.url);
      await expect(pretty.php('no_such_function();')).rejects.toThrow(/no_such_function/);
      await expect(pretty.php('this is not PHP')).rejects.toThrow(/syntax error/);
      await expect(pretty.php(`fwrite( STDERR, 'refused' ); exit( 1 );`)).rejects.toThrow(/refused/);
      // Run in the site's own server: what is printed after WordPress's shutdown flushed the buffers is kept too.
      expect(
        await pretty.php(
          `echo 'a'; add_action( 'shutdown', function () { echo 'c'; }, 99 ); ob_start(); echo 'b'; exit;`,
        ),
      ).toBe('abc');
    });

    it('run PHP only for the test bed: the server refuses a request without its token', async () => {
      const body = JSON.stringify({ script: 'run-php.php', args: [], input: 'echo 1;' });
      for (const token of [undefined, 'not-the-token']) {
        const response = await fetch(`${pretty.url}/__sitewarden-test/script`, {
          method: 'POST',
          body,
          headers: token ? { 'x-sitewarden-test-token': token } : {},
        });
        expect(response.status).toBe(403);
        expect(await response.text()).toBe('');
      }
    });
  });

  describe('plugin directory mirror', () => {
    it('answers plugins_api() with the newest version, and "Plugin not found." for unknown slugs', async () => {
      const found = JSON.parse(
        await pretty.php(`${PLUGIN_INSTALL}
          $info = plugins_api( 'plugin_information', array( 'slug' => 'sitewarden-demo' ) );
          echo wp_json_encode( $info );`),
      ) as Record<string, unknown>;
      expect(found).toMatchObject({
        slug: 'sitewarden-demo',
        name: 'Sitewarden Demo',
        version: '1.1.0',
        language_packs: [],
      });
      expect(found['download_link']).toBe(`${inject('pluginMirrorUrl')}/plugin/sitewarden-demo.1.1.0.zip`);

      const missing = JSON.parse(
        await pretty.php(`${PLUGIN_INSTALL}
          $info = plugins_api( 'plugin_information', array( 'slug' => 'no-such-plugin' ) );
          echo wp_json_encode( array( $info->get_error_code(), $info->get_error_message() ) );`),
      );
      expect(missing).toEqual(['plugins_api_failed', 'Plugin not found.']);
    });

    it('lets core REST install a plugin from it', async () => {
      const auth = { authorization: basicAuth(pretty.admin.username, pretty.admin.applicationPassword) };
      const installed = await getJson(`${pretty.url}/wp-json/wp/v2/plugins`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ slug: 'sitewarden-demo' }),
      });
      expect(installed.status, JSON.stringify(installed.body)).toBe(201);
      expect(installed.body).toMatchObject({
        plugin: 'sitewarden-demo/sitewarden-demo',
        version: '1.1.0',
        status: 'inactive',
      });
      const onDisk = readFileSync(join(pretty.root, 'wp-content/plugins/sitewarden-demo/sitewarden-demo.php'), 'utf8');
      expect(onDisk).toMatch(/^ \* Version: 1\.1\.0$/m);

      const unknown = await getJson(`${pretty.url}/wp-json/wp/v2/plugins`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ slug: 'no-such-plugin' }),
      });
      expect(unknown.status).toBe(404);
      expect(unknown.body['code']).toBe('plugins_api_failed');
    });

    it('offers updates to wp_update_plugins()/wp_update_themes(), and the upgraders install them', async () => {
      // An old release put in place by hand, as if installed long ago.
      cpSync(
        join(import.meta.dirname, 'fixtures/directory/plugins/sitewarden-demo/1.0.0/sitewarden-demo'),
        join(plain.root, 'wp-content/plugins/sitewarden-demo'),
        { recursive: true },
      );
      const offers = JSON.parse(
        await plain.php(`
          wp_update_plugins();
          wp_update_themes();
          $plugins = get_site_transient( 'update_plugins' );
          $themes  = get_site_transient( 'update_themes' );
          echo wp_json_encode( array(
            'plugin'        => $plugins->response['sitewarden-demo/sitewarden-demo.php'],
            'pluginOffers'  => array_keys( $plugins->response ),
            'theme'         => $themes->response['twentytwentyone'],
            'themesCurrent' => array_keys( $themes->no_update ),
          ) );`),
      ) as Record<string, Record<string, unknown>>;
      expect(offers['plugin']).toMatchObject({ slug: 'sitewarden-demo', new_version: '1.1.0' });
      expect(offers['pluginOffers']).toEqual(['sitewarden-demo/sitewarden-demo.php']);
      expect(offers['theme']).toMatchObject({ theme: 'twentytwentyone', new_version: '99.0.0' });
      expect(offers['theme']!['package']).toBe(`${inject('pluginMirrorUrl')}/theme/twentytwentyone.99.0.0.zip`);
      expect(offers['themesCurrent']).toEqual([]);

      const upgraded = await plain.php(`
        require_once ABSPATH . 'wp-admin/includes/admin.php';
        require_once ABSPATH . 'wp-admin/includes/class-wp-upgrader.php';
        $plugin = ( new Plugin_Upgrader( new Automatic_Upgrader_Skin() ) )->upgrade( 'sitewarden-demo/sitewarden-demo.php' );
        $theme  = ( new Theme_Upgrader( new Automatic_Upgrader_Skin() ) )->upgrade( 'twentytwentyone' );
        echo wp_json_encode( array( $plugin, $theme ) );`);
      expect(JSON.parse(upgraded)).toEqual([true, true]);
      expect(
        readFileSync(join(plain.root, 'wp-content/plugins/sitewarden-demo/sitewarden-demo.php'), 'utf8'),
      ).toContain('Version: 1.1.0');
      expect(readFileSync(join(plain.root, 'wp-content/themes/twentytwentyone/style.css'), 'utf8')).toMatch(
        /^Version: 99\.0\.0$/m,
      );
    });
  });

  describe('network fence', () => {
    it('refuses any request to a non-loopback host before connecting', async () => {
      const result = JSON.parse(
        await pretty.php(`
          $connected = false;
          add_action( 'http_api_curl', function () use ( &$connected ) { $connected = true; } );
          $response = wp_remote_get( 'https://example.com/' );
          echo wp_json_encode( array( is_wp_error( $response ) ? $response->get_error_code() : 'answered', $connected ) );`),
      );
      expect(result).toEqual(['sitewarden_test_offline', false]);
    });
  });

  describe('application authorization in a browser', () => {
    let callback: Server;
    let callbackUrl: string;
    const received: URL[] = [];

    beforeAll(async () => {
      callback = createServer((req, res) => {
        received.push(new URL(req.url ?? '/', callbackUrl));
        res.writeHead(200, { 'content-type': 'text/plain' }).end('Sitewarden received the connection');
      });
      await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
      callbackUrl = `http://127.0.0.1:${(callback.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => callback.close(() => resolve())));

    const authorizeUrl = (site: TestSite) =>
      `${site.url}/wp-admin/authorize-application.php?${new URLSearchParams({
        app_name: 'Sitewarden',
        app_id: randomUUID(),
        success_url: `${callbackUrl}/callback`,
      })}`;

    it('logs in, approves, and the callback receives a working application password', async () => {
      const result = await approveApplicationAuthorization(pretty, authorizeUrl(pretty));

      expect(result.finalUrl.startsWith(`${callbackUrl}/callback?`)).toBe(true);
      expect(result.body).toContain('Sitewarden received the connection');
      const params = received.at(-1)!.searchParams;
      expect(params.get('site_url')).toBe(pretty.url);
      expect(params.get('user_login')).toBe('admin');
      const password = params.get('password')!;
      expect(password).toMatch(/^([A-Za-z0-9]{4} ){5}[A-Za-z0-9]{4}$/);

      const me = await getJson(`${pretty.url}/wp-json/wp/v2/users/me`, {
        headers: { authorization: basicAuth('admin', password) },
      });
      expect(me.status).toBe(200);
    });

    it('reports a rejection to the callback', async () => {
      const result = await approveApplicationAuthorization(plain, authorizeUrl(plain), { reject: true });

      expect(new URL(result.finalUrl).searchParams.get('success')).toBe('false');
      const params = received.at(-1)!.searchParams;
      expect(params.get('success')).toBe('false');
      expect(params.get('password')).toBeNull();
    });
  });
});
