import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSafeUpdatesRepository } from '../../src/safe-updates/index.js';
import { createTestApp, insertConnectedSite, testServiceConfig, type TestApp } from '../support/test-app.js';
import { NO_INLINE_CODE, signIn, type SignedIn, withoutOwnStylesheet } from './signed-in.js';

/** The eight bytes every PNG starts with, and a little more: enough for the route, which never decodes it. */
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);

describe('safe updates in the dashboard', () => {
  let t: TestApp;
  let user: SignedIn;
  let siteId: string;

  beforeEach(async () => {
    t = createTestApp();
    user = await signIn(t);
    siteId = insertConnectedSite(t, { name: 'Alpha', wordpressVersion: '6.1.9' });
  });
  afterEach(() => t.close());

  /** A safe update that broke the site and was rolled back, as the flow records it, with its screenshots on disk. */
  async function insertRolledBack(): Promise<string> {
    const now = t.clock.now();
    const id = `sup_dashboard_${now.getTime()}`;
    const check = (ok: boolean) => ({
      healthy: ok,
      at: now.toISOString(),
      durationMs: 120,
      attempt: 1,
      checks: [
        {
          name: 'page',
          url: '/',
          ok,
          status: ok ? 200 : 500,
          durationMs: 80,
          ...(ok ? {} : { problem: 'fatal-error' }),
        },
      ],
    });
    await createSafeUpdatesRepository(t.state).insert({
      id,
      siteId,
      itemType: 'plugin',
      slug: 'akismet',
      status: 'rolled-back',
      phase: 'done',
      reason: 'fatal-error',
      message: 'the home page ends in a PHP fatal error',
      policy: JSON.stringify({
        urls: [],
        settleMs: 0,
        attempts: 1,
        retryDelayMs: 0,
        checkTimeoutMs: 15_000,
        backup: true,
        visual: { enabled: true, threshold: 0.03, rollback: false },
      }),
      fromVersion: '1.0.0',
      toVersion: '1.1.0',
      report: JSON.stringify({
        before: [check(true)],
        after: [check(false)],
        afterRollback: [check(true)],
        steps: [
          { step: 'restore-point', ok: true, at: now.toISOString(), durationMs: 900 },
          { step: 'update', ok: true, at: now.toISOString(), durationMs: 2_000 },
          { step: 'rollback', ok: true, at: now.toISOString(), durationMs: 1_500, detail: 'plugins/akismet put back' },
        ],
        screenshots: [
          { url: '/', before: 'before-0.png', after: 'after-0.png', diff: 'diff-0.png', changedRatio: 0.42 },
        ],
        visualChange: true,
      }),
      createdAt: now,
      startedAt: now,
      finishedAt: new Date(now.getTime() + 30_000),
    });
    const dir = join(testServiceConfig.dataDir, 'safe-updates', id);
    mkdirSync(dir, { recursive: true });
    for (const name of ['before-0.png', 'after-0.png', 'diff-0.png']) writeFileSync(join(dir, name), PNG);
    return id;
  }

  it('lists a site’s safe updates and shows a report with its checks, steps, decision and screenshots', async () => {
    const empty = await (await user.get(`/sites/${siteId}`)).text();
    expect(empty).toContain('No safe update yet');
    expect(empty).toContain(`action="/sites/${siteId}/core/safe-update"`);
    expect(empty).toContain(`action="/sites/${siteId}/core/update"`);

    const id = await insertRolledBack();
    const site = await (await user.get(`/sites/${siteId}`)).text();
    expect(site).toContain(`href="/sites/${siteId}/safe-updates/${id}">akismet (plugin)</a>`);
    expect(site).toMatch(/rolled-back<\/span\s*>\s*\(looks different\)/);

    const response = await user.get(`/sites/${siteId}/safe-updates/${id}`);
    expect(response.status).toBe(200);
    const report = await response.text();
    expect(withoutOwnStylesheet(report)).not.toMatch(NO_INLINE_CODE);
    expect(report).toContain('Safe update of akismet (plugin)');
    expect(report).toContain('the previous version was put back');
    expect(report).toContain('1.0.0 → 1.1.0');
    expect(report).toContain('Checks before');
    expect(report).toContain('Checks after the rollback');
    expect(report).toContain('HTTP 500: fatal-error');
    expect(report).toContain('plugins/akismet put back');
    expect(report).toContain('42.00 % of pixels changed');
    expect(report).toContain('30.0 s');
    for (const name of ['before-0.png', 'after-0.png', 'diff-0.png']) {
      const path = `/sites/${siteId}/safe-updates/${id}/screenshots/${name}`;
      expect(report).toContain(`src="${path}"`);
      const png = await user.get(path);
      expect(png.status, name).toBe(200);
      expect(png.headers.get('content-type')).toBe('image/png');
      expect(Buffer.from(await png.arrayBuffer())).toEqual(PNG);
    }
    // Only the names a report has, and only behind the session.
    for (const name of ['..%2F..%2Fsecret.key', 'before-0.txt', 'other.png'])
      expect((await user.get(`/sites/${siteId}/safe-updates/${id}/screenshots/${name}`)).status, name).toBe(404);
    expect((await t.app.request(`/sites/${siteId}/safe-updates/${id}/screenshots/before-0.png`)).status).toBe(303);
    expect((await user.get(`/sites/${siteId}/safe-updates/sup_nope`)).status).toBe(404);
  });

  it('removes a removed site’s screenshots with it, and those of records already gone, but no other', async () => {
    const id = await insertRolledBack();
    const root = join(testServiceConfig.dataDir, 'safe-updates');
    const gone = `sup_gone_${t.clock.now().getTime()}`;
    mkdirSync(join(root, gone), { recursive: true });
    writeFileSync(join(root, gone, 'before-0.png'), PNG);
    expect((await user.get(`/sites/${siteId}/safe-updates/${id}/screenshots/diff-0.png`)).status).toBe(200);
    const otherSite = insertConnectedSite(t, { name: 'Beta' });

    expect((await t.call('DELETE', `/api/sites/${otherSite}`)).status).toBe(204);
    await expect.poll(() => existsSync(join(root, gone))).toBe(false);
    expect(readdirSync(join(root, id)).sort()).toEqual(['after-0.png', 'before-0.png', 'diff-0.png']);

    expect((await t.call('DELETE', `/api/sites/${siteId}`)).status).toBe(204);
    await expect.poll(() => existsSync(join(root, id))).toBe(false);
  });

  it('starts safe updates from the buttons and answers a refused update with a message', async () => {
    const started = await user.post(`/sites/${siteId}/plugins/akismet/safe-update`, {});
    expect(started.status).toBe(303);
    expect(started.headers.get('location')).toBe(`/sites/${siteId}#safe-updates`);
    expect(await user.follow(started)).toContain('Safe update of akismet (plugin) started');
    expect((await user.post(`/sites/${siteId}/themes/twentytwentyfour/safe-update`, {}, false)).status).toBe(403);
    const core = await user.post(`/sites/${siteId}/core/safe-update`, {});
    expect(await user.follow(core)).toContain('Safe update of WordPress core started');
    await t.services.safeUpdates.idle();
    // Nothing listens at the site's address: both end failed, listed with their reason.
    const listed = await t.services.safeUpdates.list(siteId);
    expect(listed.map((update) => [update.type, update.status])).toEqual(
      expect.arrayContaining([
        ['plugin', 'failed'],
        ['core', 'failed'],
      ]),
    );
    // A plain core update the site cannot do is a message, never a 500.
    const plain = await user.post(`/sites/${siteId}/core/update`, {});
    expect(plain.status).toBe(303);
    expect(await user.follow(plain)).toMatch(/class="flash error"/);
  });
});
