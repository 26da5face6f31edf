import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withBrowserPage } from '../support/browser.js';
import { serveTestApp } from '../support/served-app.js';
import { insertConnectedSite } from '../support/test-app.js';
import { dashboardUser } from './dashboard-user.js';
import { journeyScreenshots } from './journey-screenshots.js';

/**
 * The audit log walked in Debian's Chromium (issue 33): a viewer tries to change a site's settings
 * through the dashboard (the form a viewer is not offered, shown by hand as someone poking at the
 * page would) and is refused; the owner signs in, opens Audit log, filters by the viewer, sees the
 * refused attempt with its address, and exports it as JSON lines. Screenshots of each step in
 * test-artifacts/journeys/audit-log/.
 */
const shot = journeyScreenshots('audit-log');

let served: Awaited<ReturnType<typeof serveTestApp>>;
const owner = dashboardUser(() => served, 'olivia');
const viewer = dashboardUser(() => served, 'victor');
let siteId: string;
let viewerId: string;

beforeAll(async () => {
  served = await serveTestApp();
  await owner.create();
  // dashboardUser creates owners; the viewer gets the same password, with its own role.
  await served.services.users.create('victor', 'a long dashboard password', 'viewer');
  viewerId = (await served.services.users.list()).find((user) => user.username === 'victor')!.id;
  siteId = insertConnectedSite(served, { name: 'Client shop' });
}, 120_000);

afterAll(async () => {
  await served?.stop();
});

describe('journey: the audit log', () => {
  it('shows a viewer’s refused change to the owner, filtered by that user, and exports it as JSON lines', async () => {
    const exported = await withBrowserPage(async (page) => {
      await viewer.signIn(page);
      await page.goto(`${served.baseUrl}/sites/${siteId}`);
      const form = page.locator(`form[action="/sites/${siteId}/settings"]`);
      // Not offered to a viewer: the form is there, hidden. Shown and sent anyway, it is refused.
      await expect(form.isHidden()).resolves.toBe(true);
      await form.evaluate((element) => element.removeAttribute('hidden'));
      await page.getByLabel('Tags (comma separated)').fill('taken-over');
      await form.getByRole('button').first().click();
      await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
      await shot(page, '01-viewer-refused');

      // The owner, in a browser of their own: no cookie of the viewer's.
      await page.context().clearCookies();
      await owner.signIn(page);
      await page.getByRole('link', { name: 'Audit log' }).click();
      await page.getByRole('heading', { name: 'Audit log' }).waitFor();
      await shot(page, '02-audit-log');
      await page.getByLabel('User or token (id)').fill(viewerId);
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL((url) => url.searchParams.get('actor') === viewerId);
      const refused = page.locator('tbody tr', { hasText: `POST /sites/:id/settings` });
      await refused.waitFor();
      const row = await refused.innerText();
      expect(row).toContain('victor');
      expect(row).toContain('127.0.0.1');
      expect(row).toMatch(/refused/i);
      // Only the viewer's entries: nothing of the owner's own sign-in.
      expect(await page.locator('tbody').innerText()).not.toContain('olivia');
      await shot(page, '03-filtered-by-the-viewer');

      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('link', { name: 'Export (JSON lines)' }).click(),
      ]);
      expect(download.suggestedFilename()).toBe('sitewarden-audit.jsonl');
      return readFile((await download.path())!, 'utf8');
    });
    const lines = exported
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { actor: { id: string | null }; userId: string | null });
    // The viewer's sign-in, the refused change and the sign-out: theirs only, oldest first.
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines.every((line) => line.actor.id === viewerId || line.userId === viewerId)).toBe(true);
    expect(lines).toContainEqual(
      expect.objectContaining({
        actor: { kind: 'user', id: viewerId, name: 'victor' },
        address: '127.0.0.1',
        method: 'POST',
        action: '/sites/:id/settings',
        siteId,
        status: 403,
        outcome: 'refused',
      }),
    );
    // Nothing was changed: the site has no tag.
    expect((await served.services.sites.tagsOf([siteId])).get(siteId) ?? []).toEqual([]);
  });
});
