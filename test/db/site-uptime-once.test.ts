import type Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { databaseBefore, seededRandom } from '../support/database-before.js';

/**
 * Migration 0032 writes the overview's uptime figures once, in the view `site_uptime_figures`, instead
 * of a copy in each of the four roll-up triggers (issue 35). The figures must stay the same exactly:
 * the same writes to a database before 0032 (0016's copies) and to one after it give the same
 * `site_summaries`, write by write, and the upgrade itself changes no row.
 */
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const SITES = ['site_a', 'site_b', 'site_c', 'site_d'];
const NOW = 400 * DAY + 7 * HOUR;

function addSites(sqlite: Database.Database): void {
  for (const id of SITES) {
    sqlite
      .prepare(
        "insert into sites (id, url, rest_url, state, created_at, updated_at) values (?, ?, ?, 'connected', 0, 0)",
      )
      .run(id, `https://${id}.example`, `https://${id}.example/wp-json/`);
    sqlite.prepare("insert into uptime_monitors (site_id, status, updated_at) values (?, 'up', 0)").run(id);
  }
}

/**
 * One write of the uptime write path, as the repository makes them: an hourly roll-up added to (a
 * new bucket or one already there), a day rolled up (`insert or replace`), a daily row corrected, or
 * the prune; buckets spread over 40 days so that rows fall in and out of the 24 h and 30 d windows.
 */
function write(next: () => number): (sqlite: Database.Database) => void {
  const site = SITES[Math.floor(next() * SITES.length)]!;
  const kind = next();
  const hourBucket = NOW - Math.floor(next() * 40 * 24) * HOUR;
  const dayBucket = NOW - (NOW % DAY) - Math.floor(next() * 40) * DAY;
  const up = Math.floor(next() * 61);
  const down = next() < 0.3 ? Math.floor(next() * 61) : 0;
  const count = next() < 0.1 ? 0 : up;
  const responseSum = count * (50 + Math.floor(next() * 900));
  if (kind < 0.6)
    return (sqlite) =>
      sqlite
        .prepare(
          `insert into uptime_hourly (site_id, bucket, up, down, response_sum, response_count, response_min, response_max)
           values (?, ?, ?, ?, ?, ?, null, null) on conflict (site_id, bucket) do update set
           up = up + excluded.up, down = down + excluded.down, response_sum = response_sum + excluded.response_sum,
           response_count = response_count + excluded.response_count`,
        )
        .run(site, hourBucket, up, down, responseSum, count);
  if (kind < 0.8)
    return (sqlite) =>
      sqlite
        .prepare(
          `insert or replace into uptime_daily (site_id, bucket, up, down, response_sum, response_count)
           values (?, ?, ?, ?, ?, ?)`,
        )
        .run(site, dayBucket, up * 24, down * 24, responseSum * 24, count * 24);
  if (kind < 0.95)
    return (sqlite) =>
      sqlite
        .prepare('update uptime_daily set up = ?, down = ? where site_id = ? and bucket = ?')
        .run(up * 24, down * 24, site, dayBucket);
  return (sqlite) => {
    sqlite.prepare('delete from uptime_hourly where site_id = ? and bucket < ?').run(site, hourBucket);
    sqlite.prepare('delete from uptime_daily where site_id = ? and bucket < ?').run(site, dayBucket - 30 * DAY);
  };
}

const summaries = (sqlite: Database.Database) =>
  sqlite
    .prepare('select site_id, uptime_24h, uptime_30d, response_ms from site_summaries order by site_id')
    .all() as Array<{
    site_id: string;
    uptime_24h: number | null;
    uptime_30d: number | null;
    response_ms: number | null;
  }>;

describe('the uptime figures written once (migration 0032)', () => {
  it('give the same site_summaries as the copies before it, write by write', () => {
    const before = databaseBefore('0032', 'memory').sqlite;
    const after = openDatabase(':memory:');
    try {
      addSites(before);
      addSites(after.sqlite);
      const next = seededRandom(35);
      let nonNull = 0;
      for (let i = 0; i < 1500; i++) {
        const apply = write(next);
        apply(before);
        apply(after.sqlite);
        const expected = summaries(before);
        expect(summaries(after.sqlite), `write ${i}`).toEqual(expected);
        nonNull += expected.filter((row) => row.uptime_24h !== null && row.uptime_30d !== null).length;
      }
      // The figures were there to compare, not nulls all along.
      expect(nonNull).toBeGreaterThan(1000);
    } finally {
      before.close();
      after.close();
    }
  }, 120_000);

  it('leaves every summary row as it was on upgrade, and the triggers after it keep them as before', () => {
    const { sqlite: old, path } = databaseBefore('0032', 'file');
    const reference = databaseBefore('0032', 'memory').sqlite;
    const next = seededRandom(34);
    addSites(old);
    addSites(reference);
    const writes = Array.from({ length: 400 }, () => write(next));
    for (const apply of writes.slice(0, 300)) {
      apply(old);
      apply(reference);
    }
    const rows = old.prepare('select * from site_summaries order by site_id').all();
    old.close();

    const upgraded = openDatabase(path);
    try {
      expect(
        upgraded.sqlite
          .prepare("select count(*) from sqlite_master where type = 'view' and name = 'site_uptime_figures'")
          .pluck()
          .get(),
      ).toBe(1);
      expect(upgraded.sqlite.prepare('select * from site_summaries order by site_id').all()).toEqual(rows);
      for (const apply of writes.slice(300)) {
        apply(upgraded.sqlite);
        apply(reference);
        expect(summaries(upgraded.sqlite)).toEqual(summaries(reference));
      }
    } finally {
      upgraded.close();
      reference.close();
    }
  }, 120_000);
});
