import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSiteUpdater, type UpdateServices } from '../../src/bulk-updates/site-updater.js';
import { createAsyncWriteBatch } from '../../src/db/write-batch.js';
import { defineProblem } from '../../src/shared/errors.js';
import { createUpdateHistoryRepository } from '../../src/update-history/update-history.repository.js';
import { createUpdateRecorder } from '../../src/update-history/update-recorder.js';
import type { ConnectedSite } from '../../src/wordpress/site-access.js';
import { createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';
import { createUpdateWatch, startUpdatableSite } from './updatable-fake.js';

/**
 * A bulk site update's plain plugins and themes have one path: the site held once, each item through
 * its service's `updateExpecting`. What that path does when it cannot go as planned: the site cannot
 * be held (each of them fails with why; translations and core still run), or a plugin is not in the
 * stored inventory (its service finds it on the site, and the inventory is read in full after).
 */
describe('the site updater’s plain plugins and themes', () => {
  let t: TestApp;
  let siteId: string;
  beforeEach(() => {
    t = createTestApp();
    siteId = insertConnectedSite(t, { name: 'Alpha' });
  });
  afterEach(() => t.close());

  const notConnected = defineProblem('site-not-connected', 409, 'The site is not connected');
  const calls: { slug: string; item: unknown; expectedVersion: string | null }[] = [];
  const itemUpdates = {
    updateExpecting: (_site: ConnectedSite, item: { slug: string }, expectedVersion: string | null) => {
      calls.push({ slug: item.slug, item, expectedVersion });
      return Promise.resolve({ result: 'updated' as const, previousVersion: '1.0.0', version: '1.1.0', active: true });
    },
  };
  const services: UpdateServices = {
    plugins: itemUpdates,
    themes: itemUpdates,
    wordpressUpdates: {
      applyCore: () => Promise.resolve({ previousVersion: '6.4.2', version: '6.5.0' }),
      applyTranslations: () => Promise.resolve({ updated: [] }),
    },
  };
  beforeEach(() => void (calls.length = 0));
  const updater = (overrides: Partial<Parameters<typeof createSiteUpdater>[0]>) =>
    createSiteUpdater({
      services,
      operate: () => Promise.reject(new Error('not held in this test')),
      inventoryAfter: { patch: () => true, sync: () => Promise.resolve() },
      recorder: createUpdateRecorder({
        repository: createUpdateHistoryRepository(t.state),
        clock: t.clock,
      }),
      events: t.services.events,
      safeUpdate: () => Promise.reject(new Error('no safe items in this test')),
      inventories: { read: () => Promise.resolve(undefined) },
      ...overrides,
    });
  /** A site update's writes held and committed as a cluster's are (on the state database's transactions), the last at its end. */
  async function updated(
    update: ReturnType<typeof createSiteUpdater>,
    request: Omit<Parameters<typeof update>[0], 'batch'>,
  ) {
    const batch = createAsyncWriteBatch((body) => t.state.transaction(body));
    const outcomes = await update({ ...request, batch });
    await batch.commit();
    return outcomes;
  }
  const run = (update: ReturnType<typeof createSiteUpdater>, items: Parameters<typeof update>[0]['items']) =>
    updated(update, {
      siteId,
      items,
      trigger: { kind: 'request', id: null },
      jobId: 'bulk_one',
      onItem: () => undefined,
    });
  const history = async () =>
    (await t.call('GET', `/api/sites/${siteId}/updates/history?limit=10`, { token: t.readToken })).json.items as {
      type: string;
    }[];

  it('fails each with why when the site cannot be held, and still applies translations and core', async () => {
    const update = updater({
      // As SiteAccess.operate: the site directory refuses before the work is queued.
      operate: () => {
        throw notConnected.create(`site ${siteId} is disconnected, not connected`);
      },
    });
    const outcomes = await run(update, [
      { type: 'core', slug: null, fromVersion: '6.4.2', toVersion: '6.5.0' },
      { type: 'translations', slug: null, fromVersion: null, toVersion: null },
      { type: 'theme', slug: 'twentytwentythree', fromVersion: '1.0.0', toVersion: '1.1.0' },
      { type: 'plugin', slug: 'akismet', fromVersion: '1.0.0', toVersion: '1.1.0' },
    ]);
    const failed = { state: 'failed', reason: 'site-not-connected', message: expect.stringContaining('disconnected') };
    expect(outcomes).toMatchObject([
      { type: 'plugin', slug: 'akismet', ...failed },
      { type: 'theme', slug: 'twentytwentythree', ...failed },
      { type: 'translations', state: 'succeeded' },
      { type: 'core', state: 'succeeded', toVersion: '6.5.0' },
    ]);
    expect(calls).toEqual([]);
    const rows = new Map((await history()).map((row) => [row.type, row]));
    for (const type of ['plugin', 'theme'])
      expect(rows.get(type)).toMatchObject({ result: 'failed', reason: 'site-not-connected', restorePoint: null });
    expect(rows.get('core')).toMatchObject({ result: 'succeeded', toVersion: '6.5.0' });
    expect(t.logs.events('update.failed').map((event) => [event['type'], event['reason']])).toEqual([
      ['plugin', 'site-not-connected'],
      ['theme', 'site-not-connected'],
    ]);
  });

  it('gives the service a plugin not in the stored inventory without its file, and reads the site in full after', async () => {
    const patched: unknown[] = [];
    const synced: string[] = [];
    const update = updater({
      operate: async (_siteId, work, options) => {
        try {
          return await work({ site: { id: siteId, url: 'https://alpha.example' } } as ConnectedSite);
        } finally {
          await options.refresh?.();
        }
      },
      inventoryAfter: {
        patch: (_siteId, applied) => {
          patched.push(applied);
          return true;
        },
        sync: (id) => Promise.resolve(void synced.push(id)),
      },
    });
    const outcomes = await run(update, [{ type: 'plugin', slug: 'akismet', fromVersion: '1.0.0', toVersion: '1.1.0' }]);
    expect(calls).toEqual([
      {
        slug: 'akismet',
        item: { slug: 'akismet', version: '1.0.0', update: { version: '1.1.0' } },
        expectedVersion: '1.1.0',
      },
    ]);
    expect(outcomes).toMatchObject([{ state: 'succeeded', fromVersion: '1.0.0', toVersion: '1.1.0' }]);
    expect(patched).toEqual([]);
    expect(synced).toEqual([siteId]);
    expect(await history()).toMatchObject([{ type: 'plugin', result: 'succeeded', toVersion: '1.1.0' }]);
  });

  it('through the plugins service, finds such a plugin’s file on the site and updates it; one not installed is plugin-not-found', async () => {
    const { site, state } = await startUpdatableSite(createUpdateWatch());
    try {
      const connected = await t.call('POST', '/api/sites', {
        json: { url: site.url, username: site.username, applicationPassword: site.applicationPassword },
      });
      expect(connected.status, connected.text).toBe(201);
      const id = connected.json.id as string;
      await t.services.sync.syncNow(id);
      const update = updater({
        services: { ...services, plugins: t.services.plugins, themes: t.services.themes },
        operate: t.services.access.operate,
        inventoryAfter: { patch: t.services.sync.patchAppliedWithin, sync: t.services.sync.syncNow },
      });
      const outcomes = await updated(update, {
        siteId: id,
        items: [
          { type: 'plugin', slug: 'akismet', fromVersion: '1.0.0', toVersion: '1.1.0' },
          { type: 'plugin', slug: 'gone', fromVersion: '1.0.0', toVersion: '1.1.0' },
        ],
        trigger: { kind: 'request', id: null },
        jobId: 'bulk_live',
        onItem: () => undefined,
      });
      expect(outcomes).toMatchObject([
        { slug: 'akismet', state: 'succeeded', fromVersion: '1.0.0', toVersion: '1.1.0' },
        { slug: 'gone', state: 'failed', reason: 'plugin-not-found' },
      ]);
      // What the site holds, and the inventory read in full after.
      expect(state.plugin).toBe('1.1.0');
      const plugins = await t.call('GET', `/api/sites/${id}/plugins`, { token: t.readToken });
      expect(plugins.json.items ?? plugins.json).toContainEqual(
        expect.objectContaining({ slug: 'akismet', version: '1.1.0', update: null }),
      );
    } finally {
      await site.close();
    }
  });
});
