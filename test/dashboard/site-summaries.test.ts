import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OverviewFilter } from '../../src/dashboard/fleet-overview.query.js';
import { type TestApp, createTestApp, insertConnectedSite, setSiteTags } from '../support/test-app.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * The overview sorts and filters on `site_summaries`, kept by triggers on the features' tables:
 * each fact changed where its feature writes it must move the site in the overview at once, and
 * the migration's backfill must give the same rows as the triggers.
 */
describe('the fleet overview follows every fact it sorts and filters by', () => {
  let t: TestApp;
  let a: string;
  let b: string;
  let c: string;
  const run = (sql: string, ...params: unknown[]) => t.database.sqlite.prepare(sql).run(...params);
  const ids = async (filter: Partial<OverviewFilter> = {}) =>
    (await t.services.fleetOverview.page({ sort: 'name', descending: false, page: 1, ...filter })).rows
      .map((row) => row.id)
      .map((id) => ({ [a]: 'a', [b]: 'b', [c]: 'c' })[id]);
  const row = async (id: string) =>
    (await t.services.fleetOverview.page({ sort: 'name', descending: false, page: 1 })).rows.find((r) => r.id === id)!;

  beforeEach(() => {
    t = createTestApp();
    a = insertConnectedSite(t, { name: 'Alpha' });
    b = insertConnectedSite(t, { name: 'Bravo' });
    c = insertConnectedSite(t, { name: 'Charlie' });
    for (const id of [a, b, c])
      run(`insert into uptime_monitors (site_id, status, updated_at) values (?, 'up', 0)`, id);
  });
  afterEach(() => t.close());

  it('status: down, degraded by a failing sync or a low score, pending; with the counts', async () => {
    expect(await ids({ status: 'up' })).toEqual(['a', 'b', 'c']);
    run(`update uptime_monitors set status = 'down' where site_id = ?`, c);
    expect((await ids({ sort: 'status' }))[0]).toBe('c');
    expect(await ids({ status: 'down' })).toEqual(['c']);
    expect(await t.services.fleetOverview.counts()).toMatchObject({ sites: 3, down: 1, degraded: 0 });
    run(`update sites set sync_error = 'timeout' where id = ?`, b);
    expect(await ids({ sort: 'status' })).toEqual(['c', 'b', 'a']);
    expect(await ids({ status: 'degraded' })).toEqual(['b']);
    run(`update sites set sync_error = null where id = ?`, b);
    run(
      `insert into performance_audits (id, site_id, url, form_factor, trigger, runs, status, queued_at, score_performance)
       values ('aud_1', ?, 'u', 'mobile', 'manual', 1, 'completed', 0, 0.3)`,
      a,
    );
    expect(await ids({ status: 'degraded' })).toEqual(['a']);
    run(`update sites set state = 'pending' where id = ?`, a);
    expect(await ids({ status: 'pending' })).toEqual(['a']);
    expect(await t.services.fleetOverview.counts()).toMatchObject({ down: 1, degraded: 0 });
    run(`delete from uptime_monitors where site_id = ?`, c);
    expect(await ids({ status: 'unknown' })).toEqual(['c']);
  });

  it('performance score: the newest completed audit, not a running one; a deleted audit gives the one before back', async () => {
    const audit = (id: string, site: string, status: string, score: number | null) =>
      run(
        `insert into performance_audits (id, site_id, url, form_factor, trigger, runs, status, queued_at, score_performance)
         values (?, ?, 'u', 'mobile', 'manual', 1, ?, 0, ?)`,
        id,
        site,
        status,
        score,
      );
    audit('aud_1', a, 'completed', 0.9);
    audit('aud_2', b, 'completed', 0.7);
    audit('aud_3', c, 'running', null);
    expect(await ids({ sort: 'score', descending: true })).toEqual(['a', 'b', 'c']);
    run(`update performance_audits set status = 'completed', score_performance = 0.95 where id = 'aud_3'`);
    expect(await ids({ sort: 'score', descending: true })).toEqual(['c', 'a', 'b']);
    audit('aud_4', a, 'completed', 0.6);
    expect(await ids({ sort: 'score', descending: true })).toEqual(['c', 'b', 'a']);
    expect((await row(a)).score).toBe(0.6);
    run(`delete from performance_audits where id = 'aud_4'`);
    expect(await ids({ sort: 'score', descending: true })).toEqual(['c', 'a', 'b']);
  });

  it('performance score: one form factor, mobile when there is one, so a desktop audit does not flip it', async () => {
    const audit = (id: string, formFactor: string, score: number) =>
      run(
        `insert into performance_audits (id, site_id, url, form_factor, trigger, runs, status, queued_at, score_performance)
         values (?, ?, 'u', ?, 'manual', 1, 'completed', 0, ?)`,
        id,
        a,
        formFactor,
        score,
      );
    audit('aud_d1', 'desktop', 0.95);
    expect((await row(a)).score).toBe(0.95); // only desktop yet: desktop's
    audit('aud_m1', 'mobile', 0.4);
    expect((await row(a)).score).toBe(0.4);
    audit('aud_d2', 'desktop', 0.97); // a newer desktop audit does not take over
    expect((await row(a)).score).toBe(0.4);
    // Degraded by its mobile score, and it stays so: the desktop audit does not flip it back.
    expect(await ids({ status: 'degraded' })).toContain('a');
    run(`delete from performance_audits where id = 'aud_m1'`);
    expect((await row(a)).score).toBe(0.97);
  });

  it('pending updates: an inventory row offering an update, and the sync that clears it', async () => {
    const item = (site: string, slug: string, update: string | null) =>
      run(
        `insert into inventory_items (site_id, type, slug, name, version, update_version, active) values (?, 'plugin', ?, ?, '1.0', ?, 1)`,
        site,
        slug,
        slug,
        update,
      );
    item(a, 'one', null);
    item(b, 'one', '1.1');
    item(b, 'two', '2.0');
    item(c, 'one', '1.1');
    expect(await ids({ hasUpdates: true })).toEqual(['b', 'c']);
    expect(await ids({ sort: 'updates', descending: true })).toEqual(['b', 'c', 'a']);
    expect((await t.services.fleetOverview.counts()).updatesPending).toBe(2);
    run(`update inventory_items set update_version = '1.5' where site_id = ? and slug = 'one'`, a);
    run(`update inventory_items set update_version = null where site_id = ?`, b);
    expect(await ids({ hasUpdates: true })).toEqual(['a', 'c']);
    run(`delete from inventory_items where site_id = ?`, c);
    expect(await ids({ hasUpdates: true })).toEqual(['a']);
    expect((await row(a)).updates).toBe(1);
  });

  it('last backup: its state, its age, and a deleted backup', async () => {
    const backup = (id: string, site: string, status: string, at: number) =>
      run(
        `insert into backups (id, site_id, kind, status, created_at, finished_at) values (?, ?, 'manual', ?, ?, ?)`,
        id,
        site,
        status,
        at,
        status === 'running' ? null : at + 1000,
      );
    backup('bkp_1', a, 'completed', 5 * DAY);
    backup('bkp_2', b, 'completed', 9 * DAY);
    expect(await ids({ sort: 'backupAge' })).toEqual(['b', 'a', 'c']);
    expect((await ids({ sort: 'backup' }))[0]).toBe('c');
    backup('bkp_3', a, 'running', 10 * DAY);
    expect((await row(a)).backupStatus).toBe('running');
    run(`update backups set status = 'failed', finished_at = ? where id = 'bkp_3'`, 10 * DAY + 5);
    expect(await ids({ backupFailed: true })).toEqual(['a']);
    expect(await ids({ sort: 'backup' })).toEqual(['a', 'c', 'b']);
    expect(await ids({ sort: 'backupAge' })).toEqual(['a', 'b', 'c']);
    expect((await t.services.fleetOverview.counts()).backupsFailing).toBe(1);
    run(`delete from backups where id = 'bkp_3'`);
    expect(await ids({ backupFailed: true })).toEqual([]);
    expect(await row(a)).toMatchObject({ backupStatus: 'completed', backupAt: 5 * DAY + 1000 });
  });

  it('uptime 24 h / 30 d and response time: hourly roll-ups as they are added to, and daily ones', async () => {
    const now = 100 * DAY;
    const hourly = (site: string, bucket: number, up: number, down: number, responseMs: number) =>
      run(
        `insert into uptime_hourly (site_id, bucket, up, down, response_sum, response_count, response_min, response_max)
         values (?, ?, ?, ?, ?, ?, null, null) on conflict (site_id, bucket) do update set
         up = up + excluded.up, down = down + excluded.down, response_sum = response_sum + excluded.response_sum,
         response_count = response_count + excluded.response_count`,
        site,
        bucket,
        up,
        down,
        responseMs * (up + down),
        up + down,
      );
    hourly(a, now - 2 * HOUR, 60, 0, 300);
    hourly(b, now - 2 * HOUR, 50, 10, 200);
    hourly(c, now - 2 * HOUR, 59, 1, 900);
    // An hour older than the window: not in the 24 h figure.
    hourly(b, now - 2 * HOUR - DAY, 0, 60, 200);
    expect(await ids({ sort: 'uptime24h' })).toEqual(['b', 'c', 'a']);
    expect((await row(b)).uptime24h).toBeCloseTo(50 / 60);
    expect(await ids({ sort: 'response', descending: true })).toEqual(['c', 'a', 'b']);
    hourly(a, now - HOUR, 0, 60, 1200);
    expect(await ids({ sort: 'uptime24h' })).toEqual(['a', 'b', 'c']);
    expect(await row(a)).toMatchObject({ uptime24h: 0.5, responseMs: 1200 });
    hourly(c, now - 2 * HOUR, 0, 119, 900);
    expect((await row(c)).uptime24h).toBeCloseTo(59 / 179);
    run(
      `insert into uptime_daily (site_id, bucket, up, down, response_sum, response_count) values (?, ?, 0, 1440, 0, 0)`,
      a,
      now - (now % DAY) - 3 * DAY,
    );
    expect(await ids({ sort: 'uptime30d' })).toEqual(['a', 'c', 'b']);
    expect((await row(a)).uptime30d).toBeCloseTo(60 / (120 + 1440));
  });

  it('name, tags and search; a deleted site leaves the overview', async () => {
    run(`update sites set name = 'Zulu' where id = ?`, a);
    expect(await ids()).toEqual(['b', 'c', 'a']);
    setSiteTags(t, c, ['client-x']);
    expect(await ids({ tag: 'client-x' })).toEqual(['c']);
    expect(await ids({ q: 'zul' })).toEqual(['a']);
    run(`delete from sites where id = ?`, b);
    expect(await ids()).toEqual(['c', 'a']);
    expect((await t.services.fleetOverview.counts()).sites).toBe(2);
    expect(t.database.sqlite.prepare('select count(*) from site_summaries').pluck().get()).toBe(2);
  });

  it("the migration's backfill gives the same rows as the triggers", async () => {
    for (let i = 0; i < 40; i++) {
      const id = insertConnectedSite(t, { name: `Site ${i}`, syncError: i % 7 === 0 ? 'timeout' : null });
      run(`insert into uptime_monitors (site_id, status, updated_at) values (?, ?, 0)`, id, i % 5 ? 'up' : 'down');
      for (let h = 1; h <= 30; h++)
        run(
          `insert into uptime_hourly (site_id, bucket, up, down, response_sum, response_count) values (?, ?, ?, ?, ?, 60)`,
          id,
          50 * DAY - h * HOUR,
          60 - (i % 3),
          i % 3,
          60 * (100 + i),
        );
      for (let d = 1; d <= 35; d++)
        run(
          `insert into uptime_daily (site_id, bucket, up, down, response_sum, response_count) values (?, ?, 1440, ?, 0, 0)`,
          id,
          50 * DAY - d * DAY,
          i % 4,
        );
      for (let n = 0; n < 3; n++) {
        run(
          `insert into performance_audits (id, site_id, url, form_factor, trigger, runs, status, queued_at, score_performance)
           values (?, ?, 'u', 'mobile', 'manual', 1, ?, 0, ?)`,
          `aud_${i}_${n}`,
          id,
          n === 2 && i % 6 === 0 ? 'failed' : 'completed',
          ((i * 13 + n * 7) % 100) / 100,
        );
        run(
          `insert into backups (id, site_id, kind, status, created_at, finished_at) values (?, ?, 'manual', ?, ?, ?)`,
          `bkp_${i}_${n}`,
          id,
          n === 2 && i % 9 === 0 ? 'failed' : 'completed',
          n * DAY,
          n * DAY + i,
        );
        run(
          `insert into inventory_items (site_id, type, slug, name, version, update_version, active) values (?, 'plugin', ?, 'x', '1', ?, 1)`,
          id,
          `p${n}`,
          (i + n) % 4 === 0 ? '2' : null,
        );
      }
    }
    const all = () => t.database.sqlite.prepare('select * from site_summaries order by site_id').all();
    const byTriggers = all();
    const migration = readFileSync(new URL('../../drizzle/0016_site_summaries.sql', import.meta.url), 'utf8');
    const statements = migration.split('--> statement-breakpoint');
    const backfill = statements.slice(statements.findIndex((s) => s.includes('-- Backfill')));
    expect(backfill.length).toBeGreaterThan(1);
    // 0025 took the score to one form factor, with its own backfill (the last statement).
    const scores = readFileSync(
      new URL('../../drizzle/0025_overview_score_one_form_factor.sql', import.meta.url),
      'utf8',
    );
    backfill.push(scores.split('--> statement-breakpoint').at(-1)!);
    run('delete from site_summaries');
    for (const statement of backfill) t.database.sqlite.exec(statement);
    expect(all()).toEqual(byTriggers);
    expect(byTriggers).toHaveLength(43);
  });
});
