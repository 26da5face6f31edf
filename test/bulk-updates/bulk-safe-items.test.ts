import { createAsyncWriteBatch } from '../../src/db/write-batch.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSiteUpdater, type SafeUpdate } from '../../src/bulk-updates/site-updater.js';
import { createUpdateHistoryRepository } from '../../src/update-history/update-history.repository.js';
import { createUpdateRecorder } from '../../src/update-history/update-recorder.js';
import { createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';

/**
 * A safe bulk update's items as the safe updates decided them (the safe updates themselves run against real
 * WordPress in test/safe-updates): the run's checks reach every safe update; a kept update whose pages look
 * different is a warning; a site already down before the update skips the item, never blaming the update.
 */
describe('the safe items of a bulk update', () => {
  let t: TestApp;
  let siteId: string;
  beforeEach(() => {
    t = createTestApp();
    siteId = insertConnectedSite(t, { name: 'Alpha' });
  });
  afterEach(() => t.close());

  const report = (slug: string, fields: Partial<Awaited<ReturnType<SafeUpdate>>>) => ({
    id: `sup_${slug}`,
    status: 'kept',
    reason: null,
    message: null,
    toVersion: '1.1.0',
    visualChange: false,
    screenshots: [],
    policy: { visual: { threshold: 0.05 } },
    ...fields,
  });
  const reports: Record<string, ReturnType<typeof report>> = {
    looks: report('looks', {
      visualChange: true,
      screenshots: [{ url: 'https://alpha.example/', changedRatio: 0.62 }],
    }),
    fine: report('fine', { screenshots: [{ url: 'https://alpha.example/', changedRatio: 0.01 }] }),
    down: report('down', {
      status: 'failed',
      reason: 'site-down-before-update',
      message:
        'the site was already down before the update (its checks failed before anything was changed), so nothing was updated: https://alpha.example/: http-503',
      toVersion: null,
    }),
    broken: report('broken', { status: 'rolled-back', reason: 'fatal-error', message: 'the home page fatals' }),
  };

  it('passes the run’s checks to each safe update and tells a warning, a site already down and a rollback apart', async () => {
    const requests: Parameters<SafeUpdate>[0][] = [];
    const update = createSiteUpdater({
      services: {} as never,
      operate: (() => Promise.reject(new Error('safe items are not held by the bulk update'))) as never,
      inventoryAfter: {} as never,
      recorder: createUpdateRecorder({
        repository: createUpdateHistoryRepository(t.state),
        clock: t.clock,
      }),
      events: t.services.events,
      safeUpdate: (request) => {
        requests.push(request);
        return Promise.resolve(reports[request.slug]!);
      },
      inventories: { read: () => Promise.resolve(undefined) },
    });
    const checks = { keyword: 'Alpha', visual: { enabled: true, threshold: 0.05, rollback: false } };
    const batch = createAsyncWriteBatch((body) => t.state.transaction(body));
    const outcomes = await update({
      siteId,
      items: ['looks', 'fine', 'down', 'broken'].map((slug) => ({
        type: 'plugin' as const,
        slug,
        fromVersion: '1.0.0',
        toVersion: '1.1.0',
      })),
      trigger: { kind: 'request', id: null },
      jobId: 'bulk_checks',
      safe: true,
      checks,
      onItem: () => undefined,
      batch,
    });
    await batch.commit();

    expect(requests.map((request) => request.policy)).toEqual([checks, checks, checks, checks]);
    const bySlug = new Map(outcomes.map((outcome) => [outcome.slug, outcome]));
    // Kept, but it looks different: succeeded with the warning, which names the page and how much changed.
    expect(bySlug.get('looks')).toMatchObject({ state: 'succeeded', reason: 'visual-change', toVersion: '1.1.0' });
    expect(bySlug.get('looks')!.message).toMatch(
      /kept, but it looks different \(safe update sup_looks\): https:\/\/alpha\.example\/ changed on 62\.0 % of its pixels \(threshold 5\.0 %\)/,
    );
    expect(bySlug.get('fine')).toMatchObject({ state: 'succeeded', reason: null, message: null });
    // Already down before the update: skipped with the safe update's own reason, not a failure of the update.
    expect(bySlug.get('down')).toMatchObject({ state: 'skipped', reason: 'site-down-before-update' });
    expect(bySlug.get('down')!.message).toContain('already down before the update');
    expect(bySlug.get('broken')).toMatchObject({ state: 'failed', reason: 'update-rolled-back' });

    const history = await t.call('GET', `/api/sites/${siteId}/updates/history?limit=10`, { token: t.readToken });
    const rows = new Map(
      (history.json.items as { slug: string }[]).map((row) => [row.slug, row as Record<string, unknown>]),
    );
    expect(rows.get('down')).toMatchObject({
      result: 'skipped',
      reason: 'site-down-before-update',
      safeUpdateId: 'sup_down',
      jobId: 'bulk_checks',
    });
    expect(rows.get('looks')).toMatchObject({
      result: 'succeeded',
      reason: 'visual-change',
      safeUpdateId: 'sup_looks',
      toVersion: '1.1.0',
    });
    expect(rows.get('fine')).toMatchObject({ result: 'succeeded', reason: null });
    expect(rows.get('broken')).toMatchObject({
      result: 'failed',
      reason: 'update-rolled-back',
      safeUpdateId: 'sup_broken',
    });
    // Only the update that broke the site counts as failed.
    expect(t.logs.events('update.failed').map((event) => event['slug'])).toEqual(['broken']);
  });
});
