import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { defaultConnectorZipPath } from '../../src/connector/connector-package.js';
import { createOidcSignIn, OIDC_CALLBACK_PATH } from '../../src/users/index.js';
import { withBrowserPage } from '../support/browser.js';
import { startOidcProvider, type TestOidcProvider } from '../support/oidc-provider.js';
import { freePort } from '../support/served-app.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/**
 * Single sign-on in a real Chromium: the sign-in page's button, the provider's own (dev) login
 * page of a real OpenID provider on loopback, and back to the dashboard signed in, with the role
 * the provider's groups give. Screenshots in test-artifacts/single-sign-on/.
 */
const ARTIFACTS = join(import.meta.dirname, '../../test-artifacts/single-sign-on');

let idp: TestOidcProvider;
let t: TestApp;
let server: ServerType;
let baseUrl: string;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  baseUrl = `http://127.0.0.1:${await freePort()}`;
  idp = await startOidcProvider({ redirectUri: `${baseUrl}${OIDC_CALLBACK_PATH}` });
  t = createTestApp({ config: { publicUrl: baseUrl } });
  const config = loadConfig({
    SITEWARDEN_OIDC_ISSUER: idp.issuer,
    SITEWARDEN_OIDC_CLIENT_ID: idp.clientId,
    SITEWARDEN_OIDC_CLIENT_SECRET: idp.clientSecret,
    SITEWARDEN_OIDC_ROLE_MAP: 'sitewarden-owners=owner,sitewarden-staff=manager',
    SITEWARDEN_OIDC_ALLOWED_DOMAINS: 'agency.example',
    SITEWARDEN_OIDC_SCOPES: 'openid email profile groups',
    SITEWARDEN_OIDC_PROVIDER_NAME: 'Agency SSO',
    SITEWARDEN_OIDC_LOCAL_PASSWORDS: 'off',
  }).oidc!;
  const oidc = createOidcSignIn({
    config,
    publicUrl: baseUrl,
    state: t.state,
    users: t.services.users,
    clock: t.clock,
    events: t.services.events,
  });
  const app = createApp({
    ...t.services,
    connectorZipPath: defaultConnectorZipPath(),
    logger: t.logs.logger,
    version: 'test',
    checkDatabase: () => true,
    oidc,
  });
  const port = Number(new URL(baseUrl).port);
  server = await new Promise((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port }, () => resolve(s));
  });
}, 120_000);

afterAll(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await t?.close();
  await idp?.stop();
});

const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

describe('single sign-on in a real browser', () => {
  it('clicks “Sign in with Agency SSO”, signs in at the provider and lands on the dashboard as a manager', async () => {
    idp.accounts.set('olivia-sub', {
      email: 'olivia@agency.example',
      email_verified: true,
      groups: ['sitewarden-staff'],
      name: 'Olivia',
    });
    await withBrowserPage(async (page) => {
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.goto(`${baseUrl}/activity`);
      expect(new URL(page.url()).pathname).toBe('/sign-in');
      // Local passwords are off: the button only.
      expect(await page.locator('input[type=password]').count()).toBe(0);
      await shot(page, '01-sign-in');

      await page.click('text=Sign in with Agency SSO');
      await page.waitForURL((url) => url.origin === idp.issuer);
      await page.fill('input[name=login]', 'olivia-sub');
      await page.fill('input[name=password]', 'anything');
      await shot(page, '02-provider-login');
      await page.click('button[type=submit]');

      // Back through the callback to where the user was going, signed in.
      await page.waitForURL(`${baseUrl}/activity`);
      await page.waitForLoadState();
      expect(await page.locator('.who').textContent()).toBe('olivia@agency.example');
      await shot(page, '03-signed-in');
    });
    const olivia = (await t.services.users.list()).find((user) => user.username === 'olivia@agency.example');
    expect(olivia?.role).toBe('manager');
    expect(t.logs.events('user.signed_in')).toMatchObject([{ username: 'olivia@agency.example', method: 'oidc' }]);
  });
});
