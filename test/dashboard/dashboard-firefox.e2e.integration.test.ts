import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withFirefoxPage } from '../support/firefox.js';
import { serveTestApp } from '../support/served-app.js';
import { insertConnectedSite } from '../support/test-app.js';

/**
 * The dashboard in Debian's Firefox ESR (WebDriver BiDi): sign in, the overview, filter by tag,
 * open a site, sign out. The Chromium test (dashboard.e2e.integration.test.ts) connects a real
 * WordPress site and acts on it; this one checks that the same pages work in the other engine,
 * on sites written to the daemon's database. Screenshots: test-artifacts/dashboard/firefox-*.png.
 */
const ARTIFACTS = join(import.meta.dirname, '../../test-artifacts/dashboard');
const PASSWORD = 'a long dashboard password';
const DAY = 86_400_000;

let served: Awaited<ReturnType<typeof serveTestApp>>;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  served = await serveTestApp();
  await served.services.users.create('alice', PASSWORD);
  const sqlite = served.database.sqlite;
  const now = Date.now();
  for (let i = 0; i < 12; i++) {
    const id = insertConnectedSite(served, {
      name: `Client ${String.fromCharCode(65 + i)} shop`,
      tags: i % 3 === 0 ? ['client-a'] : ['client-b'],
    });
    sqlite
      .prepare(`insert into uptime_monitors (site_id, status, updated_at) values (?, ?, ?)`)
      .run(id, i === 4 ? 'down' : 'up', now);
    for (let h = 1; h <= 24; h++)
      sqlite
        .prepare(
          `insert into uptime_hourly (site_id, bucket, up, down, response_sum, response_count) values (?, ?, ?, ?, ?, 60)`,
        )
        .run(
          id,
          now - (now % 3_600_000) - h * 3_600_000,
          i === 4 && h < 3 ? 0 : 60,
          i === 4 && h < 3 ? 60 : 0,
          60 * (180 + i * 37),
        );
    for (let a = 0; a < 6; a++)
      sqlite
        .prepare(
          `insert into performance_audits (id, site_id, url, form_factor, trigger, runs, status, queued_at, score_performance)
           values (?, ?, 'u', 'mobile', 'scheduled', 1, 'completed', ?, ?)`,
        )
        .run(`aud_ff_${i}_${a}`, id, now - (6 - a) * DAY, 0.55 + ((i * 7 + a * 5) % 40) / 100);
    sqlite
      .prepare(
        `insert into backups (id, site_id, kind, status, created_at, finished_at) values (?, ?, 'scheduled', ?, ?, ?)`,
      )
      .run(`bkp_ff_${i}`, id, i === 7 ? 'failed' : 'completed', now - DAY, now - DAY + 60_000);
  }
}, 60_000);

afterAll(async () => {
  await served?.stop();
});

const shot = (page: Page, name: string) =>
  page.screenshot({ path: join(ARTIFACTS, `firefox-${name}.png`) as `${string}.png`, fullPage: true });

/** Clicks what starts a navigation and waits for the page it leads to. */
async function navigate(page: Page, click: () => Promise<unknown>): Promise<void> {
  await Promise.all([page.waitForNavigation(), click()]);
}

describe('the dashboard in Firefox', () => {
  it('signs in, shows the overview, filters by tag, opens a site and signs out; reaches nothing outside loopback', async () => {
    const { outside } = await withFirefoxPage(async (page) => {
      const errors: string[] = [];
      page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
      page.on('pageerror', (error) => errors.push(String(error)));
      await page.setViewport({ width: 1280, height: 800 });

      await page.goto(`${served.baseUrl}/`);
      expect(new URL(page.url()).pathname).toBe('/sign-in');
      await page.type('#username', 'alice');
      await page.type('#password', PASSWORD);
      await shot(page, '01-sign-in');
      await navigate(page, () => page.click('button[type="submit"]'));
      expect(new URL(page.url()).pathname).toBe('/');

      // The overview, styled by the inline stylesheet the CSP allows by its hash.
      await page.waitForSelector('table.sites');
      const display = await page.$eval(
        'header.top',
        (header) =>
          (globalThis as unknown as { getComputedStyle(element: unknown): { display: string } }).getComputedStyle(
            header,
          ).display,
      );
      expect(display).toBe('flex');
      expect(await page.$eval('table.sites caption', (caption) => caption.textContent?.trim())).toBe('12 of 12 sites');
      expect(await page.$$eval('table.sites tbody tr', (rows) => rows.length)).toBe(12);
      expect(await page.$eval('ul.counts', (counts) => counts.textContent?.replace(/\s+/g, ' '))).toContain('1 down');
      await shot(page, '02-overview');

      // Filter by tag with the form, as a person would.
      await page.select('#tag', 'client-a');
      await navigate(page, () => page.click('form.filters button[type="submit"]'));
      expect(new URL(page.url()).searchParams.get('tag')).toBe('client-a');
      const names = await page.$$eval('table.sites tbody th a', (links) => links.map((link) => link.textContent));
      expect(names).toEqual(['Client A shop', 'Client D shop', 'Client G shop', 'Client J shop']);
      await shot(page, '03-overview-tag');

      // Open a site.
      await navigate(page, () => page.click('table.sites tbody tr:nth-child(2) th a'));
      expect(new URL(page.url()).pathname).toMatch(/^\/sites\/site_/);
      await page.waitForSelector('h1');
      expect(await page.$eval('h1', (heading) => heading.textContent)).toContain('Client D shop');
      await shot(page, '04-site');

      // Sign out: the session is gone, the site page leads to sign-in again.
      const siteUrl = page.url();
      await navigate(page, () => page.click('form.signout button[type="submit"]'));
      expect(new URL(page.url()).pathname).toBe('/sign-in');
      await page.goto(siteUrl);
      expect(new URL(page.url()).pathname).toBe('/sign-in');
      await shot(page, '05-signed-out');
      expect(errors).toEqual([]);
    });
    expect(outside).toEqual([]);
  }, 180_000);
});
