import { describe, expect, it } from 'vitest';
import { createBulkUpdatesRepository, childId } from '../../src/bulk-updates/bulk-updates.repository.js';
import { tableFor } from '../../src/db/dialect.js';
import { pgInventoryItems, inventoryItems as sqliteInventoryItems } from '../../src/inventory/index.js';
import { createJobStore } from '../../src/jobs/job-store.js';
import type { NewJobRow } from '../../src/jobs/jobs.table.js';
import { pgSafeUpdates, safeUpdates as sqliteSafeUpdates } from '../../src/safe-updates/index.js';
import type { NewSafeUpdateRow } from '../../src/safe-updates/safe-updates.table.js';
import type { SiteRow } from '../../src/sites/index.js';
import { createSitesRepository } from '../../src/sites/sites.repository.js';
import { createUpdateHistoryRepository, type StartedRow } from '../../src/update-history/update-history.repository.js';
import { dialects, stateDatabaseFor } from '../support/dialects.js';

/**
 * What a bulk update reads, on both dialects (issue 34, docs/design/cluster-state.md): one test body on SQLite
 * `:memory:` and on a database of the run's PostgreSQL cluster. On SQLite the selection's and the children's reads
 * run as statements prepared once, on PostgreSQL as the common body: the same rows either way.
 */
const at = (ms: number) => new Date(Date.UTC(2026, 11, 1) + ms);
const ids = (rows: readonly { id: string }[]) => rows.map((row) => row.id);

describe.each(dialects)('the bulk updates repository on %s', (dialect) => {
  const state = stateDatabaseFor(dialect, 'bulk-updates-repository');
  const repository = () => createBulkUpdatesRepository(state());

  const addSite = async (
    id: string,
    { tags = [], state: siteState = 'connected' }: { tags?: string[]; state?: SiteRow['state'] } = {},
  ) => {
    const sites = createSitesRepository(state());
    await sites.insert({
      id,
      url: `https://${id}.example.test`,
      restUrl: `https://${id}.example.test/wp-json/`,
      state: siteState,
      wordpressVersion: '6.5',
      createdAt: at(0),
      updatedAt: at(0),
    });
    if (tags.length > 0) await sites.setTags(id, tags);
  };
  const addItems = (...rows: { siteId: string; slug: string; type?: 'plugin' | 'theme'; update?: string }[]) => {
    const items = tableFor(dialect, { sqlite: sqliteInventoryItems, postgres: pgInventoryItems });
    return state().run((db) =>
      db.insert(items).values(
        rows.map((row) => ({
          siteId: row.siteId,
          type: row.type ?? 'plugin',
          slug: row.slug,
          name: row.slug,
          version: '1.0.0',
          updateVersion: row.update ?? null,
          active: true,
        })),
      ),
    );
  };
  const addJobs = (...rows: (Pick<NewJobRow, 'id'> & Partial<NewJobRow>)[]) =>
    createJobStore(state()).insertMany(
      rows.map((row) => ({ kind: 'site-update', state: 'queued', createdAt: at(0), ...row })),
    );
  const attempt = (id: string, fields: Partial<StartedRow> = {}): StartedRow => ({
    id,
    siteId: 'site_a',
    type: 'plugin',
    slug: 'akismet',
    fromVersion: '1.0.0',
    toVersion: '1.1.0',
    startedAt: at(1_000),
    triggerKind: 'request',
    triggerId: null,
    jobId: 'bulk_1',
    safeUpdateId: null,
    result: 'running',
    ...fields,
  });
  const addAttempts = async (...rows: StartedRow[]) => {
    const history = createUpdateHistoryRepository(state());
    for (const row of rows) await history.insert(row);
  };
  const addSafeUpdates = (...rows: (Pick<NewSafeUpdateRow, 'id'> & Partial<NewSafeUpdateRow>)[]) => {
    const safeUpdates = tableFor(dialect, { sqlite: sqliteSafeUpdates, postgres: pgSafeUpdates });
    return state().run((db) =>
      db.insert(safeUpdates).values(
        rows.map((row) => ({
          siteId: 'site_a',
          itemType: 'plugin' as const,
          slug: 'akismet',
          status: 'running' as const,
          phase: 'updating' as const,
          policy: '{}',
          fromVersion: '1.0.0',
          toVersion: '1.1.0',
          createdAt: at(1_000),
          ...row,
        })),
      ),
    );
  };

  describe('sites', () => {
    it('reads sites by id (in id order, unknown ones left out), every site, or none for no id', async () => {
      await addSite('site_b');
      await addSite('site_a', { state: 'authorization_expired' });
      await addSite('site_c');
      expect(await repository().sites({ ids: ['site_c', 'site_x', 'site_a'] })).toEqual([
        { id: 'site_a', url: 'https://site_a.example.test', state: 'authorization_expired', wordpressVersion: '6.5' },
        { id: 'site_c', url: 'https://site_c.example.test', state: 'connected', wordpressVersion: '6.5' },
      ]);
      expect(ids(await repository().sites({ all: true }))).toEqual(['site_a', 'site_b', 'site_c']);
      expect(await repository().sites({ ids: [] })).toEqual([]);
    });

    it('reads the sites carrying every one of the tags, a tag named twice counted once', async () => {
      await addSite('site_a', { tags: ['client:1', 'staging'] });
      await addSite('site_b', { tags: ['client:1'] });
      await addSite('site_c', { tags: ['staging', 'client:1', 'eu'] });
      await addSite('site_d');
      expect(ids(await repository().sites({ tags: ['client:1'] }))).toEqual(['site_a', 'site_b', 'site_c']);
      expect(ids(await repository().sites({ tags: ['staging', 'client:1'] }))).toEqual(['site_a', 'site_c']);
      expect(ids(await repository().sites({ tags: ['staging', 'staging', 'client:1'] }))).toEqual(['site_a', 'site_c']);
      expect(await repository().sites({ tags: ['client:1', 'nowhere'] })).toEqual([]);
    });

    it('binds a list of more sites than PostgreSQL takes parameters as one', async () => {
      await addSite('site_a');
      await addItems({ siteId: 'site_a', slug: 'akismet', update: '1.1.0' });
      const many = [...Array.from({ length: 70_000 }, (_, index) => `site_${index}`), 'site_a'];
      expect(ids(await repository().sites({ ids: many }))).toEqual(['site_a']);
      expect((await repository().items(many, { pendingOnly: true })).map((item) => item.slug)).toEqual(['akismet']);
    });
  });

  it('reads the listed sites’ plugins and themes by site, all of them or those offered an update', async () => {
    await addSite('site_a');
    await addSite('site_b');
    await addSite('site_c');
    await addItems(
      { siteId: 'site_b', slug: 'akismet', update: '5.1' },
      { siteId: 'site_a', slug: 'hello' },
      { siteId: 'site_a', slug: 'akismet', update: '5.1' },
      { siteId: 'site_a', slug: 'astra', type: 'theme', update: '4.0' },
      { siteId: 'site_c', slug: 'akismet', update: '5.1' },
    );
    const pending = await repository().items(['site_b', 'site_a'], { pendingOnly: true });
    expect(pending.map((item) => item.siteId)).toEqual(['site_a', 'site_a', 'site_b']);
    expect(pending).toEqual(
      expect.arrayContaining([
        { siteId: 'site_a', type: 'plugin', slug: 'akismet', version: '1.0.0', updateVersion: '5.1' },
        { siteId: 'site_a', type: 'theme', slug: 'astra', version: '1.0.0', updateVersion: '4.0' },
        { siteId: 'site_b', type: 'plugin', slug: 'akismet', version: '1.0.0', updateVersion: '5.1' },
      ]),
    );
    const all = await repository().items(['site_a'], { pendingOnly: false });
    expect(all.map((item) => item.slug).sort()).toEqual(['akismet', 'astra', 'hello']);
    expect(all.find((item) => item.slug === 'hello')).toMatchObject({ updateVersion: null });
    expect(await repository().items([], { pendingOnly: false })).toEqual([]);
  });

  describe('children', () => {
    it('reads a bulk job’s children in their order, not another bulk job’s whose id starts alike', async () => {
      await addJobs(
        { id: childId('bulk_1', 1), siteId: 'site_b', state: 'succeeded' },
        { id: childId('bulk_1', 0), siteId: 'site_a', kind: 'safe-site-update' },
        { id: 'bulk_1', kind: 'bulk-update' },
        { id: 'bulk_10', kind: 'bulk-update' },
        { id: childId('bulk_10', 0) },
        // `_` in a pattern would match any character: not a child of bulk_1.
        { id: childId('bulkx1', 0) },
        // Of another kind, in the range.
        { id: `${childId('bulk_1', 2)}-note`, kind: 'audit' },
      );
      const children = await repository().children('bulk_1');
      expect(ids(children)).toEqual([childId('bulk_1', 0), childId('bulk_1', 1)]);
      expect(children[0]).toMatchObject({ kind: 'safe-site-update', siteId: 'site_a', state: 'queued' });
      expect(children[1]).toMatchObject({ kind: 'site-update', siteId: 'site_b', state: 'succeeded' });
      expect(children[0]!.createdAt).toEqual(at(0));
      expect(ids(await repository().children('bulk_10'))).toEqual([childId('bulk_10', 0)]);
      expect(await repository().children('bulk_2')).toEqual([]);
    });

    it('reads them on a transaction given, seeing its own writes', async () => {
      await addJobs({ id: childId('bulk_1', 0) });
      const store = createJobStore(state());
      const seen = await state().transaction(async (tx) => {
        await store.insert({ id: childId('bulk_1', 1), kind: 'site-update', state: 'queued', createdAt: at(0) }, tx);
        return ids(await repository().children('bulk_1', tx));
      });
      expect(seen).toEqual([childId('bulk_1', 0), childId('bulk_1', 1)]);
    });

    it('reads them at once for the cancel hook inside the job runner’s SQLite transaction, and refuses on PostgreSQL', async () => {
      await addJobs({ id: childId('bulk_1', 0) }, { id: childId('bulk_1', 1), state: 'cancelled' });
      if (dialect === 'postgres') {
        expect(() => repository().inHook.children('bulk_1')).toThrow(/job store's transaction/);
        return;
      }
      const read = repository().inHook.children('bulk_1');
      expect(read).toEqual(await repository().children('bulk_1'));
      expect(read.map((row) => row.state)).toEqual(['queued', 'cancelled']);
    });
  });

  it('reads the attempts one site’s child of a bulk job recorded, in their order', async () => {
    await addSite('site_a');
    await addSite('site_b');
    await addAttempts(
      attempt('upd_2', { slug: 'hello' }),
      attempt('upd_1'),
      attempt('upd_3', { siteId: 'site_b' }),
      attempt('upd_4', { jobId: 'bulk_2' }),
      attempt('upd_5', { jobId: null }),
    );
    const attempts = await repository().attemptsOf('bulk_1', 'site_a');
    expect(ids(attempts)).toEqual(['upd_1', 'upd_2']);
    expect(attempts[0]).toMatchObject({ siteId: 'site_a', slug: 'akismet', result: 'running', startedAt: at(1_000) });
    expect(await repository().attemptsOf('bulk_1', 'site_c')).toEqual([]);
  });

  describe('the safe update an attempt ran as', () => {
    it('is the first of its site and item created as it started, that no other history row names', async () => {
      await addSite('site_a');
      await addSite('site_b');
      const started = attempt('upd_1');
      await addSafeUpdates(
        { id: 'safe_before', createdAt: at(999) },
        { id: 'safe_other_site', siteId: 'site_b' },
        { id: 'safe_other_slug', slug: 'hello' },
        { id: 'safe_theme', itemType: 'theme' },
        { id: 'safe_named' },
        { id: 'safe_later', createdAt: at(1_500), status: 'kept' },
        { id: 'safe_first_b', createdAt: at(1_200) },
        { id: 'safe_first_a', createdAt: at(1_200) },
      );
      await addAttempts(attempt('upd_api', { jobId: null, safeUpdateId: 'safe_named' }));
      expect(await repository().safeUpdateStartedBy(started)).toEqual({
        id: 'safe_first_a',
        status: 'running',
        reason: null,
        message: null,
        fromVersion: '1.0.0',
        toVersion: '1.1.0',
      });
      // Once an attempt names it, the next one is found.
      await addAttempts(attempt('upd_2', { slug: 'other', safeUpdateId: 'safe_first_a' }));
      expect(await repository().safeUpdateStartedBy(started)).toMatchObject({ id: 'safe_first_b' });
      expect(await repository().safeUpdateStartedBy({ ...started, startedAt: at(1_300) })).toMatchObject({
        id: 'safe_later',
        status: 'kept',
      });
      expect(await repository().safeUpdateStartedBy({ ...started, startedAt: at(2_000) })).toBeUndefined();
    });

    it('is WordPress itself for core, and none for translations', async () => {
      await addSite('site_a');
      await addSafeUpdates({ id: 'safe_core', itemType: 'core', slug: 'wordpress' });
      expect(await repository().safeUpdateStartedBy(attempt('upd_1', { type: 'core', slug: null }))).toMatchObject({
        id: 'safe_core',
      });
      expect(
        await repository().safeUpdateStartedBy(attempt('upd_1', { type: 'translations', slug: null })),
      ).toBeUndefined();
    });

    it('is read by its id, and none for an unknown id', async () => {
      await addSite('site_a');
      await addSafeUpdates({ id: 'safe_1', status: 'rolled-back', reason: 'fatal-error', message: 'the home page' });
      expect(await repository().safeUpdate('safe_1')).toEqual({
        id: 'safe_1',
        status: 'rolled-back',
        reason: 'fatal-error',
        message: 'the home page',
        fromVersion: '1.0.0',
        toVersion: '1.1.0',
      });
      expect(await repository().safeUpdate('safe_2')).toBeUndefined();
    });
  });

  it('names the safe update on the attempt’s row, which then leads back to its bulk job and site', async () => {
    await addSite('site_a');
    await addSafeUpdates({ id: 'safe_1' }, { id: 'safe_api' });
    await addAttempts(attempt('upd_1'), attempt('upd_2', { slug: 'hello' }));
    expect(await repository().bulkAttemptOf('safe_1')).toBeUndefined();

    await repository().linkSafeUpdate('upd_1', 'safe_1');
    const history = createUpdateHistoryRepository(state());
    expect(await history.find('site_a', 'upd_1')).toMatchObject({ safeUpdateId: 'safe_1', result: 'running' });
    expect(await history.find('site_a', 'upd_2')).toMatchObject({ safeUpdateId: null });
    expect(await repository().bulkAttemptOf('safe_1')).toEqual({ jobId: 'bulk_1', siteId: 'site_a' });
    // A safe update asked for through the API is no bulk attempt.
    await addAttempts(attempt('upd_api', { jobId: null, safeUpdateId: 'safe_api' }));
    expect(await repository().bulkAttemptOf('safe_api')).toBeUndefined();
    // An unknown attempt: nothing written.
    await repository().linkSafeUpdate('upd_9', 'safe_1');
    expect(await history.find('site_a', 'upd_9')).toBeUndefined();
  });

  it('reads the sites of the plain attempts left running, each once', async () => {
    await addSite('site_a');
    await addSite('site_b');
    await addSite('site_c');
    await addAttempts(
      attempt('upd_1'),
      attempt('upd_2', { slug: 'hello', jobId: null }),
      attempt('upd_3', { siteId: 'site_b', safeUpdateId: 'safe_1' }),
      attempt('upd_4', { siteId: 'site_c', result: 'succeeded' as StartedRow['result'] }),
    );
    expect(await repository().sitesWithAbandonedAttempts()).toEqual(['site_a']);
  });
});
