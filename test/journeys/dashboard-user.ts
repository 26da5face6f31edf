import type { Page } from 'playwright-core';
import type { serveTestApp } from '../support/served-app.js';

const PASSWORD = 'a long dashboard password';

/** A dashboard user for a journey: created on the served app, signed in in a page. */
export function dashboardUser(served: () => Awaited<ReturnType<typeof serveTestApp>>, username = 'alice') {
  return {
    create: () => served().services.users.create(username, PASSWORD),
    /** Signs in on a desktop-sized page and waits for the first page after sign-in. */
    async signIn(page: Page): Promise<void> {
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.goto(`${served().baseUrl}/sign-in`);
      await page.getByLabel('User name').fill(username);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((url) => url.pathname !== '/sign-in');
    },
  };
}
