import { generateSync } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withBrowserPage } from '../support/browser.js';
import { serveTestApp } from '../support/served-app.js';
import { dashboardUser } from './dashboard-user.js';
import { journeyScreenshots } from './journey-screenshots.js';

/**
 * A user turns on two-factor sign-in in Debian's Chromium: the QR code on the account page (an
 * inline SVG under the dashboard's CSP), the first code, the recovery codes; then signs out and
 * in again with the password and a code from the authenticator (computed here with otplib).
 * Screenshots of each step in test-artifacts/journeys/two-factor-sign-in/.
 */
const shot = journeyScreenshots('two-factor-sign-in');

let served: Awaited<ReturnType<typeof serveTestApp>>;
const alice = dashboardUser(() => served);

beforeAll(async () => {
  served = await serveTestApp();
  await alice.create();
}, 120_000);

afterAll(async () => {
  await served?.stop();
});

describe('journey: two-factor sign-in', () => {
  it('enrols from the account page, signs out, and signs in with the password and a code', async () => {
    const problems: string[] = [];
    const secret = await withBrowserPage(async (page) => {
      // Anything the CSP refused (an inline style in the SVG, say) is a console error.
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text());
      });
      await alice.signIn(page);
      await page.goto(`${served.baseUrl}/settings/account`);
      await page.getByRole('link', { name: 'Set up two-factor' }).click();
      await page.getByRole('button', { name: 'Begin' }).click();
      const qr = page.getByRole('img', { name: 'QR code of the authenticator secret' });
      await qr.waitFor();
      const box = await qr.boundingBox();
      expect(box?.width).toBeGreaterThan(150);
      await shot(page, '01-scan-the-qr-code');
      const secret = (await page.locator('#totp-secret').innerText()).trim();

      await page.getByLabel('6-digit code').fill(generateSync({ secret }));
      await page.getByRole('button', { name: 'Turn on two-factor' }).click();
      await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
      expect(await page.locator('#recovery-codes code').count()).toBe(10);
      await shot(page, '02-recovery-codes');
      await page.getByRole('link', { name: 'Done' }).click();
      await page.getByText(/On since .*10 of 10 recovery codes left/).waitFor();
      await shot(page, '03-account-two-factor-on');

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL((url) => url.pathname === '/sign-in');
      await page.getByLabel('User name').fill('alice');
      await page.getByLabel('Password').fill('a long dashboard password');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((url) => url.pathname === '/sign-in/two-factor');
      await shot(page, '04-code-asked');
      // The next step's code: the one that confirmed the enrolment may not be used again.
      const next = generateSync({ secret, epoch: Math.floor(Date.now() / 1000) + 30 });
      await page.getByLabel(/6-digit code from your authenticator app/).fill(next);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((url) => url.pathname === '/');
      await page.locator('header .who').getByText('alice').waitFor();
      await shot(page, '05-signed-in');
      return secret;
    });
    expect(problems).toEqual([]);
    const [user] = await served.services.users.list();
    expect(user?.twoFactorEnabled).toBe(true);
    // The secret is stored sealed, never in clear, and never logged.
    const row = served.database.sqlite.prepare('SELECT totp_secret FROM users WHERE id = ?').get(user!.id) as {
      totp_secret: string;
    };
    expect(row.totp_secret).not.toContain(secret);
    expect(served.logs.raw()).not.toContain(secret);
    expect(served.logs.events('user.signed_in')).toHaveLength(2);
  });
});
