import { writtenAtOnce } from '../../src/db/write-batch.js';
import { sql } from 'drizzle-orm';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { rowsOf } from '../../src/db/dialect.js';
import { createSitesRepository } from '../../src/sites/sites.repository.js';
import type { updateHistory as pgUpdateHistory } from '../../src/update-history/update-history.pg-table.js';
import { createUpdateHistoryRepository, type StartedRow } from '../../src/update-history/update-history.repository.js';
import type {
  updateHistory as sqliteUpdateHistory,
  UpdateHistoryRow,
} from '../../src/update-history/update-history.table.js';
import { dialects, stateDatabaseFor, type RowsOf } from '../support/dialects.js';

/**
 * The update history on both dialects (issue 34, docs/design/cluster-state.md): one test body on SQLite
 * `:memory:` and on a database of the run's PostgreSQL cluster. On SQLite the starts and ends run as
 * statements prepared once, on PostgreSQL as the common body: the same rows either way. The writes a bulk
 * site update's write batch and the bulk kind's recovery hook make at once (`within`) are SQLite's only,
 * until the batch and the hooks give their transaction: tested there, and refused on PostgreSQL.
 */
const at = (ms: number) => new Date(Date.UTC(2026, 11, 1) + ms);
const attempt = (id: string, fields: Partial<StartedRow> = {}): StartedRow => ({
  id,
  siteId: 'site_a',
  type: 'plugin',
  slug: 'akismet',
  fromVersion: '1.0.0',
  toVersion: '1.1.0',
  startedAt: at(0),
  triggerKind: 'request',
  triggerId: 'tok_1',
  jobId: null,
  safeUpdateId: null,
  result: 'running',
  ...fields,
});
const ids = (rows: readonly { id: string }[]) => rows.map((row) => row.id);

describe('the update history table', () => {
  it('infers the same row types on both dialects, so the repository reads and writes the same rows', () => {
    expectTypeOf<RowsOf<typeof pgUpdateHistory>>().toEqualTypeOf<RowsOf<typeof sqliteUpdateHistory>>();
  });
});

describe.each(dialects)('the update history repository on %s', (dialect) => {
  const state = stateDatabaseFor(dialect, 'update-history-repository');
  const addSite = async (id: string, tags: readonly string[] = []) => {
    const sites = createSitesRepository(state());
    await sites.insert({
      id,
      url: `https://${id}.example.test`,
      restUrl: `https://${id}.example.test/wp-json/`,
      state: 'connected',
      createdAt: at(0),
      updatedAt: at(0),
    });
    if (tags.length > 0) await sites.setTags(id, tags);
  };

  it('writes an attempt as it starts and answers it as stored, its date to the millisecond', async () => {
    await addSite('site_a');
    const history = createUpdateHistoryRepository(state());
    const started = await history.insert(
      attempt('upd_1', { startedAt: at(1_234), restorePoint: JSON.stringify({ id: 'rp_1', target: 'akismet' }) }),
    );
    const stored = await history.find('site_a', 'upd_1');
    expect(stored).toStrictEqual(started);
    expect(stored).toMatchObject({
      result: 'running',
      finishedAt: null,
      reason: null,
      error: null,
      rollbackOf: null,
      restorePoint: JSON.stringify({ id: 'rp_1', target: 'akismet' }),
    });
    expect(stored!.startedAt.getTime()).toBe(at(1_234).getTime());
    // Another site's id does not find it.
    expect(await history.find('site_b', 'upd_1')).toBeUndefined();
  });

  it('refuses an attempt of an unknown site, and a site removed takes its attempts with it', async () => {
    await addSite('site_a');
    const history = createUpdateHistoryRepository(state());
    await expect(history.insert(attempt('upd_1', { siteId: 'site_unknown' }))).rejects.toThrow();
    await history.insert(attempt('upd_2'));
    await createSitesRepository(state()).delete('site_a');
    expect(await history.list({ limit: 10 })).toEqual([]);
  });

  it('ends an attempt: the versions it names replace the ones started with, the others are kept', async () => {
    await addSite('site_a');
    const history = createUpdateHistoryRepository(state());
    await history.insert(attempt('upd_1'));
    await history.insert(attempt('upd_2', { safeUpdateId: 'sup_started' }));
    await history.finish('upd_1', {
      result: 'succeeded',
      toVersion: '1.2.0',
      safeUpdateId: 'sup_learnt',
      finishedAt: at(5_005),
    });
    await history.finish('upd_2', {
      result: 'failed',
      reason: 'site-operation-failed',
      error: 'the site refused',
      finishedAt: at(6_006),
    });
    expect(await history.find('site_a', 'upd_1')).toMatchObject({
      result: 'succeeded',
      fromVersion: '1.0.0',
      toVersion: '1.2.0',
      safeUpdateId: 'sup_learnt',
      reason: null,
      error: null,
      finishedAt: at(5_005),
    });
    expect(await history.find('site_a', 'upd_2')).toMatchObject({
      result: 'failed',
      fromVersion: '1.0.0',
      toVersion: '1.1.0',
      safeUpdateId: 'sup_started',
      reason: 'site-operation-failed',
      error: 'the site refused',
      finishedAt: at(6_006),
    });
  });

  it('ends a safe update’s attempt by its report only while it runs; whether it did', async () => {
    await addSite('site_a');
    const history = createUpdateHistoryRepository(state());
    await history.insert(attempt('upd_1', { safeUpdateId: 'sup_1', fromVersion: null }));
    const kept = { result: 'succeeded' as const, fromVersion: '1.0.1', toVersion: null, finishedAt: at(9_000) };
    expect(await history.finishSafeUpdate('sup_1', kept)).toBe(true);
    expect(await history.find('site_a', 'upd_1')).toMatchObject({
      result: 'succeeded',
      fromVersion: '1.0.1',
      toVersion: '1.1.0',
      finishedAt: at(9_000),
    });
    // Ended already (a second decision, or a report that has no row): nothing is written.
    const again = { result: 'failed' as const, fromVersion: null, reason: 'update-rolled-back', finishedAt: at(9_999) };
    expect(await history.finishSafeUpdate('sup_1', again)).toBe(false);
    expect(await history.finishSafeUpdate('sup_none', again)).toBe(false);
    expect(await history.find('site_a', 'upd_1')).toMatchObject({ result: 'succeeded', finishedAt: at(9_000) });
  });

  it('ends the attempts a stopped process left running, except those a queued safe update will end', async () => {
    await addSite('site_a');
    const history = createUpdateHistoryRepository(state());
    await history.insert(attempt('upd_cut_1'));
    await history.insert(attempt('upd_cut_2'));
    await history.insert(attempt('upd_safe', { safeUpdateId: 'sup_queued' }));
    await history.insert(attempt('upd_done'));
    await history.finish('upd_done', { result: 'succeeded', finishedAt: at(1_000) });
    const end = { reason: 'interrupted', error: 'the daemon stopped', finishedAt: at(2_000) };
    expect(await history.endAbandoned(end)).toBe(2);
    const rows = new Map((await history.list({ limit: 10 })).map((row) => [row.id, row]));
    expect(rows.get('upd_cut_1')).toMatchObject({ result: 'failed', reason: 'interrupted', finishedAt: at(2_000) });
    expect(rows.get('upd_cut_2')).toMatchObject({ result: 'failed', error: 'the daemon stopped' });
    expect(rows.get('upd_safe')).toMatchObject({ result: 'running', finishedAt: null });
    expect(rows.get('upd_done')).toMatchObject({ result: 'succeeded', finishedAt: at(1_000) });
    expect(await history.endAbandoned(end)).toBe(0);
  });

  describe('rollbacks', () => {
    const rollback = (id: string, of: string) => ({
      ...attempt(id, { fromVersion: '1.1.0', toVersion: '1.0.0', triggerKind: 'user', triggerId: 'usr_1' }),
      rollbackOf: of,
    });

    it('starts a rollback of an entry once: a second finds the first, running or done, and writes nothing', async () => {
      await addSite('site_a');
      const history = createUpdateHistoryRepository(state());
      await history.insert(attempt('upd_1'));
      await history.finish('upd_1', { result: 'succeeded', finishedAt: at(1_000) });

      const first = await history.startRollback(rollback('upd_rb_1', 'upd_1'));
      expect(first).toMatchObject({ started: { id: 'upd_rb_1', rollbackOf: 'upd_1', result: 'running' } });
      expect(await history.rollbackOf('upd_1')).toMatchObject({ id: 'upd_rb_1' });
      expect(await history.startRollback(rollback('upd_rb_2', 'upd_1'))).toMatchObject({
        rolledBackBy: { id: 'upd_rb_1' },
      });
      await history.finish('upd_rb_1', { result: 'succeeded', finishedAt: at(2_000) });
      expect(await history.startRollback(rollback('upd_rb_3', 'upd_1'))).toMatchObject({
        rolledBackBy: { id: 'upd_rb_1', result: 'succeeded' },
      });
      expect(ids(await history.list({ limit: 10 }))).toEqual(['upd_rb_1', 'upd_1']);
    });

    it('starts another once the rollback failed; none of an entry that is gone', async () => {
      await addSite('site_a');
      const history = createUpdateHistoryRepository(state());
      await history.insert(attempt('upd_1'));
      await history.startRollback(rollback('upd_rb_1', 'upd_1'));
      await history.finish('upd_rb_1', { result: 'failed', reason: 'restore-point-not-restored', finishedAt: at(1) });
      expect(await history.rollbackOf('upd_1')).toBeUndefined();
      expect(await history.startRollback(rollback('upd_rb_2', 'upd_1'))).toMatchObject({ started: { id: 'upd_rb_2' } });
      expect(await history.rollbackOf('upd_1')).toMatchObject({ id: 'upd_rb_2' });

      expect(await history.startRollback(rollback('upd_rb_3', 'upd_gone'))).toBeUndefined();
      expect(await history.find('site_a', 'upd_rb_3')).toBeUndefined();
    });

    it('of four rollbacks of one entry asked for at once, starts one', async () => {
      await addSite('site_a');
      const history = createUpdateHistoryRepository(state());
      await history.insert(attempt('upd_1'));
      const answers = await Promise.all(
        ['upd_rb_1', 'upd_rb_2', 'upd_rb_3', 'upd_rb_4'].map((id) => history.startRollback(rollback(id, 'upd_1'))),
      );
      const started = answers.filter((answer) => answer && 'started' in answer);
      expect(started).toHaveLength(1);
      const rollbacks = (await history.list({ limit: 10 })).filter((row) => row.rollbackOf === 'upd_1');
      expect(rollbacks).toHaveLength(1);
      for (const answer of answers)
        if (answer && 'rolledBackBy' in answer) expect(answer.rolledBackBy.id).toBe(rollbacks[0]!.id);
    });
  });

  it('lists newest first by each filter, a page before an id, and only the sites a scope sees', async () => {
    await addSite('site_a', ['blue', 'red']);
    await addSite('site_b', ['blue']);
    await addSite('site_c');
    const history = createUpdateHistoryRepository(state());
    await history.insert(attempt('upd_1', { startedAt: at(1_000) }));
    await history.insert(
      attempt('upd_2', { siteId: 'site_b', type: 'theme', slug: 'twentyten', startedAt: at(2_000) }),
    );
    await history.insert(attempt('upd_3', { siteId: 'site_c', type: 'core', slug: null, startedAt: at(3_000) }));
    await history.insert(
      attempt('upd_4', { triggerKind: 'policy', triggerId: 'pol_1', jobId: 'bulk_1', startedAt: at(4_000) }),
    );
    await history.finish('upd_1', { result: 'succeeded', finishedAt: at(1_500) });

    expect(ids(await history.list({ limit: 10 }))).toEqual(['upd_4', 'upd_3', 'upd_2', 'upd_1']);
    expect(ids(await history.list({ limit: 2 }))).toEqual(['upd_4', 'upd_3']);
    expect(ids(await history.list({ before: 'upd_3', limit: 10 }))).toEqual(['upd_2', 'upd_1']);
    expect(ids(await history.list({ siteId: 'site_a', limit: 10 }))).toEqual(['upd_4', 'upd_1']);
    expect(ids(await history.list({ type: 'theme', limit: 10 }))).toEqual(['upd_2']);
    expect(ids(await history.list({ slug: 'akismet', limit: 10 }))).toEqual(['upd_4', 'upd_1']);
    expect(ids(await history.list({ result: 'succeeded', limit: 10 }))).toEqual(['upd_1']);
    expect(ids(await history.list({ triggerKind: 'policy', triggerId: 'pol_1', limit: 10 }))).toEqual(['upd_4']);
    expect(ids(await history.list({ triggerKind: 'policy', triggerId: 'pol_2', limit: 10 }))).toEqual([]);
    expect(ids(await history.list({ since: at(2_000), until: at(4_000), limit: 10 }))).toEqual(['upd_3', 'upd_2']);
    // Tags: the sites carrying every one named (a tag named twice counts once).
    expect(ids(await history.list({ tags: ['blue'], limit: 10 }))).toEqual(['upd_4', 'upd_2', 'upd_1']);
    expect(ids(await history.list({ tags: ['blue', 'red', 'red'], limit: 10 }))).toEqual(['upd_4', 'upd_1']);
    expect(ids(await history.list({ tags: ['green'], limit: 10 }))).toEqual([]);
    // Scopes: every site, the sites of any of the tags, none for no tags.
    expect(ids(await history.list({ scope: { kind: 'all' }, limit: 10 }))).toHaveLength(4);
    expect(ids(await history.list({ scope: { kind: 'tags', tags: ['red'] }, limit: 10 }))).toEqual(['upd_4', 'upd_1']);
    expect(ids(await history.list({ scope: { kind: 'tags', tags: ['blue'] }, siteId: 'site_b', limit: 10 }))).toEqual([
      'upd_2',
    ]);
    expect(await history.list({ scope: { kind: 'tags', tags: [] }, limit: 10 })).toEqual([]);
  });

  it('answers a bulk job’s attempts in the order they started', async () => {
    await addSite('site_a');
    await addSite('site_b');
    const history = createUpdateHistoryRepository(state());
    await history.insert(attempt('upd_2', { jobId: 'bulk_1', siteId: 'site_b' }));
    await history.insert(attempt('upd_1', { jobId: 'bulk_1' }));
    await history.insert(attempt('upd_3', { jobId: 'bulk_2' }));
    expect(ids(await history.ofJob('bulk_1'))).toEqual(['upd_1', 'upd_2']);
    expect(await history.ofJob('bulk_none')).toEqual([]);
  });

  it('holds its times as the dialect’s own: timestamptz on PostgreSQL, epoch milliseconds on SQLite', async () => {
    await addSite('site_a');
    const history = createUpdateHistoryRepository(state());
    await history.insert(attempt('upd_1', { startedAt: at(1_234) }));
    await history.finish('upd_1', { result: 'succeeded', finishedAt: at(5_678) });
    const [stored] = await state().run((db) =>
      rowsOf<{ startedMs: number | string; finishedMs: number | string }>(
        state(),
        db,
        dialect === 'postgres'
          ? sql`select (extract(epoch from started_at) * 1000)::bigint::text as "startedMs",
                 (extract(epoch from finished_at) * 1000)::bigint::text as "finishedMs",
                 pg_typeof(started_at)::text as type from update_history`
          : sql`select started_at as startedMs, finished_at as finishedMs from update_history`,
      ),
    );
    expect(Number(stored!.startedMs)).toBe(at(1_234).getTime());
    expect(Number(stored!.finishedMs)).toBe(at(5_678).getTime());
    if (dialect === 'postgres') expect(stored).toMatchObject({ type: 'timestamp with time zone' });
  });

  it('writes on the transaction a write batch gives it (`within`), or at once on SQLite without one', async () => {
    await addSite('site_a');
    const history = createUpdateHistoryRepository(state());
    // On a state database's transaction (a cluster's batch): the common body on `tx`, rolled back with it.
    const onTx = await state().transaction(async (tx) => {
      const row = await history.within.insert(attempt('upd_t1'), tx);
      await history.within.insert(attempt('upd_t2', { safeUpdateId: 'sup_t2' }), tx);
      await history.within.finish(
        'upd_t1',
        { result: 'skipped', reason: 'no-update-available', finishedAt: at(1) },
        tx,
      );
      expect(await history.within.finishSafeUpdate('sup_t2', { result: 'succeeded', finishedAt: at(2) }, tx)).toBe(
        true,
      );
      expect(await history.within.finishSafeUpdate('sup_t2', { result: 'failed', finishedAt: at(3) }, tx)).toBe(false);
      return row;
    });
    expect(onTx).toMatchObject({ id: 'upd_t1', result: 'running', finishedAt: null });
    expect(await history.find('site_a', 'upd_t1')).toMatchObject({ result: 'skipped', finishedAt: at(1) });
    expect(await history.find('site_a', 'upd_t2')).toMatchObject({ result: 'succeeded', finishedAt: at(2) });
    await expect(
      state().transaction(async (tx) => {
        await history.within.insert(attempt('upd_t3'), tx);
        throw new Error('the batch failed');
      }),
    ).rejects.toThrow('the batch failed');
    expect(await history.find('site_a', 'upd_t3')).toBeUndefined();
    if (dialect === 'postgres') {
      // No statement to write at once: a held write is given its transaction there.
      expect(() => history.within.insert(attempt('upd_1'))).toThrow(/on its transaction/);
      return;
    }
    const sqlite = state().sqlite!;
    // One better-sqlite3 transaction, as a bulk site update's write batch commits its held writes.
    const written: UpdateHistoryRow = sqlite.transaction(() => {
      const row = writtenAtOnce(history.within.insert(attempt('upd_1')));
      writtenAtOnce(history.within.insert(attempt('upd_2', { safeUpdateId: 'sup_2' })));
      writtenAtOnce(
        history.within.finish('upd_1', { result: 'skipped', reason: 'no-update-available', finishedAt: at(1_000) }),
      );
      expect(history.within.finishSafeUpdate('sup_2', { result: 'succeeded', finishedAt: at(2_000) })).toBe(true);
      expect(history.within.finishSafeUpdate('sup_2', { result: 'failed', finishedAt: at(3_000) })).toBe(false);
      return row;
    })();
    expect(written).toMatchObject({ id: 'upd_1', result: 'running', finishedAt: null });
    expect(await history.find('site_a', 'upd_1')).toMatchObject({ result: 'skipped', finishedAt: at(1_000) });
    expect(await history.find('site_a', 'upd_2')).toMatchObject({ result: 'succeeded', finishedAt: at(2_000) });
    // Rolled back with the caller's transaction.
    expect(() =>
      sqlite.transaction(() => {
        writtenAtOnce(history.within.insert(attempt('upd_3')));
        throw new Error('the batch failed');
      })(),
    ).toThrow('the batch failed');
    expect(await history.find('site_a', 'upd_3')).toBeUndefined();
  });
});
