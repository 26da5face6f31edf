import { createHash } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { withBrowserPage } from '../support/browser.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { createTestSite, type TestSite } from '../support/wordpress/index.js';
import { connectSite, installConnector } from '../support/wordpress-state.js';

/**
 * One-click sign-in on real WordPress with the real connector: a link minted through the daemon's
 * API, opened in Debian's Chromium on a fresh profile each time. It signs in as the connected
 * administrator once; used again, expired or made up, it leaves WordPress's login form with an
 * error; turned off for the site, the daemon refuses before asking the site.
 */
let site: TestSite;
let t: TestApp;
let siteId: string;

beforeAll(async () => {
  site = await createTestSite();
  await installConnector(site);
  t = createTestApp();
  siteId = await connectSite(t, site);
}, 240_000);

afterAll(async () => {
  await t?.close();
  await site?.stop();
});

async function mint(): Promise<{ url: string; expiresAt: string; token: string }> {
  const answer = await t.call('POST', `/api/sites/${siteId}/admin-login`);
  expect(answer.status, answer.text).toBe(200);
  const url = answer.json.url as string;
  return { url, expiresAt: answer.json.expiresAt as string, token: new URL(url).searchParams.get('sitewarden_login')! };
}

interface Landing {
  status: number | undefined;
  path: string;
  signedInAs: string | null;
  loginError: string | null;
}

/** Opens `url` in a browser that has never seen the site, and says where it landed and as whom. */
function openFresh(url: string, onPage?: (page: Page) => Promise<void>): Promise<Landing> {
  return withBrowserPage(async (page) => {
    const response = await page.goto(url);
    await onPage?.(page);
    const bar = page.locator('#wp-admin-bar-my-account .display-name').first();
    const error = page.locator('#login_error');
    return {
      status: response?.status(),
      path: new URL(page.url()).pathname,
      signedInAs: (await bar.count()) > 0 ? await bar.innerText() : null,
      loginError: (await error.count()) > 0 ? await error.innerText() : null,
    };
  });
}

const storedLinks = async () =>
  Number(
    await site.php(
      `global $wpdb; echo (int) $wpdb->get_var( "SELECT COUNT(*) FROM {$wpdb->options} WHERE option_name LIKE '\\_transient\\_sitewarden\\_login\\_%'" );`,
    ),
  );

describe('one-click sign-in to wp-admin on real WordPress', () => {
  it('signs in as the connected administrator once; the same link again shows the login form', async () => {
    const { url, expiresAt, token } = await mint();
    expect(url.startsWith(`${site.url}/wp-login.php?sitewarden_login=`)).toBe(true);
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(Date.parse(expiresAt) - Date.now()).toBeLessThanOrEqual(61_000);
    // Only a hash is stored on the site.
    expect(
      await site.php(`echo wp_json_encode( array_map( 'maybe_unserialize', $GLOBALS['wpdb']->get_col(
        "SELECT option_value FROM {$GLOBALS['wpdb']->options} WHERE option_name LIKE '%sitewarden%login%'" ) ) );`),
    ).not.toContain(token);

    const first = await openFresh(url, async (page) => {
      await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
    });
    expect(first).toMatchObject({ path: '/wp-admin/', signedInAs: site.admin.username, loginError: null });

    const again = await openFresh(url);
    expect(again).toMatchObject({ status: 200, path: '/wp-login.php', signedInAs: null });
    expect(again.loginError).toContain('unknown, already used or expired');

    const [event] = t.logs.events('site.admin-login');
    expect(event).toMatchObject({ siteId, wordpressUser: site.admin.username, requestedByKind: 'token' });
    expect(t.logs.raw()).not.toContain(token);
  });

  it('does not sign in with an expired link, and the link is gone afterwards', async () => {
    const { url, token } = await mint();
    const key = `sitewarden_login_${createHash('sha256').update(token).digest('hex').slice(0, 32)}`;
    await site.php(
      `$link = get_transient( '${key}' ); $link['expires'] = time() - 1; set_transient( '${key}', $link, 60 );`,
    );

    const landing = await openFresh(url);
    expect(landing).toMatchObject({ status: 200, path: '/wp-login.php', signedInAs: null });
    expect(landing.loginError).toContain('unknown, already used or expired');
    expect(await site.php(`echo wp_json_encode( get_transient( '${key}' ) );`)).toBe('false');
  });

  it('shows the login form with an error, not a PHP error, for a made-up or malformed token', async () => {
    for (const token of ['f'.repeat(64), 'not-a-token', '']) {
      const landing = await openFresh(`${site.url}/wp-login.php?sitewarden_login=${token}`);
      expect(landing, token).toMatchObject({ status: 200, path: '/wp-login.php', signedInAs: null });
      expect(landing.loginError, token).toContain('unknown, already used or expired');
    }
    // An array where a string belongs is refused the same way.
    const array = await fetch(`${site.url}/wp-login.php?sitewarden_login[]=x`);
    expect(array.status).toBe(200);
    expect(await array.text()).toContain('unknown, already used or expired');
  });

  it('is refused by the connector to anyone but an administrator', async () => {
    const route = `${site.url}/wp-json/sitewarden/v1/admin-login`;
    expect((await fetch(route, { method: 'POST' })).status).toBe(401);
    const editor = await site.createUser('editor');
    const asEditor = await fetch(route, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${editor.username}:${editor.applicationPassword}`).toString('base64')}`,
      },
    });
    expect(asEditor.status).toBe(403);
  });

  it('turned off for the site: 409 admin-login-disabled and no request to the site', async () => {
    const off = await t.call('PATCH', `/api/sites/${siteId}`, { json: { adminLogin: { enabled: false } } });
    expect(off.status, off.text).toBe(200);
    const before = await storedLinks();
    const requests = vi.spyOn(t.services.http, 'request');
    try {
      const refused = await t.call('POST', `/api/sites/${siteId}/admin-login`);
      expect(refused.status, refused.text).toBe(409);
      expect(refused.json.type).toBe('/problems/admin-login-disabled');
      expect(requests).not.toHaveBeenCalled();
    } finally {
      requests.mockRestore();
      await t.call('PATCH', `/api/sites/${siteId}`, { json: { adminLogin: { enabled: null } } });
    }
    expect(await storedLinks()).toBe(before);
  });
});
