import type Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { databaseBefore, seededRandom } from '../support/database-before.js';

/**
 * Migration 0035: a probe's write to its hourly roll-up rewrites the overview's summary row only when
 * one of its uptime figures can move. The figures must stay exact: the same probes written to a
 * database before 0035 (every hourly update recomputed) and to one at HEAD give the same
 * `site_summaries`, probe by probe, while the summary writes of an all-up site go.
 */
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const NOW = 400 * DAY;
/** Always up at 120 ms; up with a wandering response time; down now and then; down often. */
const SITES = ['site_steady', 'site_wandering', 'site_flaky', 'site_down'];

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

/** One probe as the uptime repository adds it to its hour (src/uptime/uptime.repository.ts, `addHourly`). */
function probe(sqlite: Database.Database, site: string, bucket: number, up: boolean, responseMs: number | null): void {
  const count = up && responseMs !== null ? 1 : 0;
  sqlite
    .prepare(
      `insert into uptime_hourly (site_id, bucket, up, down, response_sum, response_count, response_min, response_max)
       values (?, ?, ?, ?, ?, ?, ?, ?) on conflict (site_id, bucket) do update set
       up = up + excluded.up, down = down + excluded.down, response_sum = response_sum + excluded.response_sum,
       response_count = response_count + excluded.response_count,
       response_min = min(coalesce(response_min, excluded.response_min), coalesce(excluded.response_min, response_min)),
       response_max = max(coalesce(response_max, excluded.response_max), coalesce(excluded.response_max, response_max))`,
    )
    .run(site, bucket, up ? 1 : 0, up ? 0 : 1, count * (responseMs ?? 0), count, responseMs, responseMs);
}

/** The next probe: a site, its hour (mostly the current one, now and then the next), up or down, its response time. */
function nextProbe(next: () => number, hour: { bucket: number }) {
  if (next() < 0.02) hour.bucket += HOUR;
  const site = SITES[Math.floor(next() * SITES.length)]!;
  const down = site === 'site_down' ? next() < 0.3 : site === 'site_flaky' ? next() < 0.02 : false;
  const responseMs = site === 'site_steady' ? 120 : next() < 0.05 ? null : 80 + Math.floor(next() * 400);
  // Now and then a late probe of the previous hour, written after the hour turned.
  const bucket = next() < 0.03 ? hour.bucket - HOUR : hour.bucket;
  return { site, bucket, up: !down, responseMs };
}

const summaries = (sqlite: Database.Database) =>
  sqlite.prepare('select site_id, uptime_24h, uptime_30d, response_ms from site_summaries order by site_id').all();
const changes = (sqlite: Database.Database) => sqlite.prepare('select total_changes()').pluck().get() as number;

describe('the overview summary left alone when no uptime figure can move (migration 0035)', () => {
  it('gives the same site_summaries as recomputing at every probe, probe by probe', () => {
    const before = databaseBefore('0035', 'memory').sqlite;
    const after = openDatabase(':memory:');
    try {
      addSites(before);
      addSites(after.sqlite);
      const next = seededRandom(35);
      const hour = { bucket: NOW - 30 * HOUR };
      for (let i = 0; i < 3000; i++) {
        const { site, bucket, up, responseMs } = nextProbe(next, hour);
        for (const sqlite of [before, after.sqlite]) probe(sqlite, site, bucket, up, responseMs);
        expect(summaries(after.sqlite), `probe ${i}`).toEqual(summaries(before));
      }
      const figures = summaries(after.sqlite) as { site_id: string; uptime_24h: number; response_ms: number }[];
      // Every kind of site was there to compare: all up, some down, a response time.
      expect(figures.find((row) => row.site_id === 'site_steady')).toMatchObject({ uptime_24h: 1, response_ms: 120 });
      expect(figures.find((row) => row.site_id === 'site_down')!.uptime_24h).toBeLessThan(0.9);
      // And the writes went: the steady site's probes (a quarter of them) rewrite no summary row.
      expect(changes(before) - changes(after.sqlite)).toBeGreaterThan(500);
    } finally {
      before.close();
      after.close();
    }
  }, 120_000);

  it('rewrites the summary when a probe moves a figure, and only the roll-up when none moves', () => {
    const database = openDatabase(':memory:');
    const sqlite = database.sqlite;
    try {
      addSites(sqlite);
      const written = (work: () => void) => {
        const start = changes(sqlite);
        work();
        return changes(sqlite) - start;
      };
      const bucket = NOW;
      // The hour's first probe inserts its row: the summary is written (figures 1, 1, 120 ms).
      expect(written(() => probe(sqlite, 'site_steady', bucket, true, 120))).toBe(2);
      // Up again at the same response time: nothing on the summary can move.
      expect(written(() => probe(sqlite, 'site_steady', bucket, true, 120))).toBe(1);
      // A response time that moves the hour's integer average: the summary follows.
      expect(written(() => probe(sqlite, 'site_steady', bucket, true, 180))).toBe(2);
      // A probe with no response time moves no average: left alone.
      expect(written(() => probe(sqlite, 'site_steady', bucket, true, null))).toBe(1);
      // Down: the figures fall.
      expect(written(() => probe(sqlite, 'site_steady', bucket, false, null))).toBe(2);
      // Up after a down in the window: the 24 h figure rises again with each probe.
      expect(written(() => probe(sqlite, 'site_steady', bucket, true, null))).toBe(2);
      expect(sqlite.prepare("select uptime_24h from site_summaries where site_id = 'site_steady'").pluck().get()).toBe(
        5 / 6,
      );
    } finally {
      database.close();
    }
  });
});
