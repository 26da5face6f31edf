import { sql } from 'drizzle-orm';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { isUniqueViolation, rowsOf, tableFor } from '../../src/db/dialect.js';
import { createSitesRepository } from '../../src/sites/sites.repository.js';
import * as pg from '../../src/uptime/uptime.pg-table.js';
import { createUptimeRepository, type BucketRow, type ProbeRow } from '../../src/uptime/uptime.repository.js';
import * as sqlite from '../../src/uptime/uptime.table.js';
import { dialects, stateDatabaseFor, type RowsOf } from '../support/dialects.js';

/**
 * The uptime tables on both dialects (issue 34, docs/design/cluster-state.md): one test body on SQLite
 * `:memory:` (where a second's probes and the roll-ups are better-sqlite3 transactions of prepared
 * statements) and on a database of the run's PostgreSQL cluster (multi-row statements in a transaction).
 */
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2026, 2, 2);

describe('the uptime tables of the two dialects', () => {
  it('give the repository the same rows', () => {
    expectTypeOf<RowsOf<typeof pg.uptimeMonitors>>().toEqualTypeOf<RowsOf<typeof sqlite.uptimeMonitors>>();
    expectTypeOf<RowsOf<typeof pg.uptimeProbes>>().toEqualTypeOf<RowsOf<typeof sqlite.uptimeProbes>>();
    expectTypeOf<RowsOf<typeof pg.uptimeHourly>>().toEqualTypeOf<RowsOf<typeof sqlite.uptimeHourly>>();
    expectTypeOf<RowsOf<typeof pg.uptimeDaily>>().toEqualTypeOf<RowsOf<typeof sqlite.uptimeDaily>>();
    expectTypeOf<RowsOf<typeof pg.downtimeEvents>>().toEqualTypeOf<RowsOf<typeof sqlite.downtimeEvents>>();
    expectTypeOf<RowsOf<typeof pg.uptimeRollupMarks>>().toEqualTypeOf<RowsOf<typeof sqlite.uptimeRollupMarks>>();
  });
});

describe.each(dialects)('the uptime repository on %s', (dialect) => {
  const state = stateDatabaseFor(dialect, 'uptime-repository');

  async function withSites(...ids: string[]) {
    const sites = createSitesRepository(state());
    for (const id of ids)
      await sites.insert({
        id,
        url: `https://${id}.example.test`,
        restUrl: `https://${id}.example.test/wp-json/`,
        state: id.includes('pending') ? 'pending' : 'connected',
        createdAt: new Date(T0),
        updatedAt: new Date(T0),
      });
    return { sites, uptime: createUptimeRepository(state()) };
  }
  /** The daily roll-up as stored (the repository writes it, the dashboard's view reads it). */
  const dailyRows = () =>
    state().run((db) =>
      db
        .select()
        .from(tableFor(dialect, { sqlite: sqlite.uptimeDaily, postgres: pg.uptimeDaily }))
        .orderBy(sql`site_id, bucket`),
    );
  const rows = <Row extends Record<string, unknown>>(query: ReturnType<typeof sql>) =>
    state().run((db) => rowsOf<Row>(state(), db, query));
  const probe = (siteId: string, at: number, fields: Partial<ProbeRow> = {}): ProbeRow => ({
    siteId,
    at,
    up: true,
    httpStatus: 200,
    responseMs: 100,
    cause: null,
    certificateExpiresAt: null,
    ...fields,
  });
  const bucket = (siteId: string, at: number, fields: Partial<BucketRow> = {}): BucketRow => ({
    siteId,
    bucket: at,
    up: 60,
    down: 0,
    responseSum: 6000,
    responseCount: 60,
    responseMin: 50,
    responseMax: 200,
    ...fields,
  });

  it('makes a monitor with the defaults once, keeps it as it is after, and none for a site that is not there', async () => {
    const { uptime } = await withSites('site_a');
    expect(await uptime.findMonitor('site_a')).toBeUndefined();
    const made = await uptime.ensureMonitor('site_a', T0);
    expect(made).toEqual({
      siteId: 'site_a',
      intervalSeconds: null,
      timeoutMs: null,
      expectedStatusJson: null,
      keyword: null,
      keywordMode: 'present',
      paused: false,
      status: 'unknown',
      statusSince: null,
      certificateExpiresAt: null,
      certificateWarnedFor: null,
      updatedAt: T0,
    });
    await uptime.updateMonitor('site_a', { paused: true, status: 'up', statusSince: T0 + 5, updatedAt: T0 + 5 });
    const again = await uptime.ensureMonitor('site_a', T0 + 10);
    expect(again).toMatchObject({ paused: true, status: 'up', statusSince: T0 + 5, updatedAt: T0 + 5 });
    expect(await uptime.findMonitor('site_a')).toEqual(again);
    await expect(uptime.ensureMonitor('site_gone', T0)).rejects.toThrow();
    expect(await uptime.updateMonitor('site_gone', { paused: true })).toBeUndefined();
  });

  it('answers the connected sites with their monitors, making the missing ones', async () => {
    const { uptime } = await withSites('site_a', 'site_b', 'site_pending');
    await uptime.writeSettings('site_b', { intervalSeconds: 300, updatedAt: T0 - 1 });
    const connected = await uptime.connectedSites(T0);
    expect(
      connected.map(({ siteId, url, monitor }) => [siteId, url, monitor.intervalSeconds, monitor.updatedAt]),
    ).toEqual(
      expect.arrayContaining([
        ['site_a', 'https://site_a.example.test', null, T0],
        ['site_b', 'https://site_b.example.test', 300, T0 - 1],
      ]),
    );
    expect(connected).toHaveLength(2);
    expect(await uptime.findMonitor('site_pending')).toBeUndefined();
    expect(await uptime.connectedSites(T0 + 1)).toEqual(expect.arrayContaining(connected));
  });

  it('answers the sites written since a time, and a digest that changes only with which sites are connected', async () => {
    const { sites, uptime } = await withSites('site_a', 'site_b', 'site_c');
    await uptime.connectedSites(T0);
    const digest = await uptime.connectedDigest();
    expect(await uptime.monitorChanges(T0 + 1)).toEqual([]);

    // A monitor's settings, and a site's own row (no longer connected here), are changes; the digest sees the second.
    await uptime.writeSettings('site_a', { paused: true, updatedAt: T0 + 5 });
    expect(await uptime.connectedDigest()).toBe(digest);
    await sites.update('site_b', { state: 'authorization_failed', updatedAt: new Date(T0 + 6) });
    const changes = await uptime.monitorChanges(T0 + 5);
    expect(changes.map(({ siteId, connected, monitor }) => [siteId, connected, monitor.paused])).toEqual(
      expect.arrayContaining([
        ['site_a', true, true],
        ['site_b', false, false],
      ]),
    );
    expect(changes).toHaveLength(2);
    expect(await uptime.monitorChanges(T0 + 7)).toEqual([]);
    const disconnected = await uptime.connectedDigest();
    expect(disconnected).not.toBe(digest);

    // A site removed is no change to read, but the digest tells; one connected in its place as well.
    await sites.delete('site_c');
    const removed = await uptime.connectedDigest();
    expect(removed).not.toBe(disconnected);
    await withSites('site_d');
    expect(await uptime.connectedDigest()).not.toBe(removed);
    await sites.delete('site_d');
    expect(await uptime.connectedDigest()).toBe(removed);
  });

  it('writes settings into a monitor, making it first when there is none', async () => {
    const { uptime } = await withSites('site_a');
    const made = await uptime.writeSettings('site_a', {
      timeoutMs: 5000,
      keyword: 'Hello',
      keywordMode: 'absent',
      updatedAt: T0,
    });
    expect(made).toMatchObject({
      siteId: 'site_a',
      timeoutMs: 5000,
      keyword: 'Hello',
      keywordMode: 'absent',
      paused: false,
    });
    const changed = await uptime.writeSettings('site_a', { timeoutMs: null, paused: true, updatedAt: T0 + 1 });
    expect(changed).toMatchObject({ timeoutMs: null, keyword: 'Hello', paused: true, updatedAt: T0 + 1 });
    expect(await uptime.findMonitor('site_a')).toEqual(changed);
  });

  it('opens a downtime event with the status, and closes it with the next', async () => {
    const { uptime } = await withSites('site_a', 'site_b');
    await uptime.ensureMonitor('site_a', T0);
    await uptime.recordTransition('site_a', {
      status: 'down',
      since: T0 + 1000,
      open: { startedAt: T0 + 1000, cause: 'timeout' },
    });
    expect(await uptime.findMonitor('site_a')).toMatchObject({
      status: 'down',
      statusSince: T0 + 1000,
      updatedAt: T0 + 1000,
    });
    const open = await uptime.openEvent('site_a');
    expect(open).toEqual({
      id: expect.any(Number),
      siteId: 'site_a',
      startedAt: T0 + 1000,
      endedAt: null,
      cause: 'timeout',
    });
    expect(await uptime.openEvent('site_b')).toBeUndefined();

    await uptime.recordTransition('site_a', { status: 'up', since: T0 + 5000, closeAt: T0 + 5000 });
    expect(await uptime.findMonitor('site_a')).toMatchObject({ status: 'up', statusSince: T0 + 5000 });
    expect(await uptime.openEvent('site_a')).toBeUndefined();
    expect(await uptime.downtimeEvents('site_a', { limit: 10 })).toEqual([{ ...open, endedAt: T0 + 5000 }]);
  });

  it('pages downtime events newest first, before a cursor, overlapping a range', async () => {
    const { uptime } = await withSites('site_a', 'site_b');
    await uptime.ensureMonitor('site_a', T0);
    for (let i = 0; i < 3; i++) {
      const start = T0 + i * HOUR;
      await uptime.recordTransition('site_a', {
        status: 'down',
        since: start,
        open: { startedAt: start, cause: 'connect' },
      });
      if (i < 2)
        await uptime.recordTransition('site_a', { status: 'up', since: start + 60_000, closeAt: start + 60_000 });
    }
    await uptime.recordTransition('site_b', { status: 'down', since: T0, open: { startedAt: T0, cause: 'dns' } });
    const starts = (events: { startedAt: number }[]) => events.map((event) => (event.startedAt - T0) / HOUR);
    const all = await uptime.downtimeEvents('site_a', { limit: 10 });
    expect(starts(all)).toEqual([2, 1, 0]);
    expect(starts(await uptime.downtimeEvents('site_a', { limit: 2 }))).toEqual([2, 1]);
    expect(starts(await uptime.downtimeEvents('site_a', { limit: 2, beforeId: all[1]!.id }))).toEqual([0]);
    // Overlapping [from, to]: ended at or after `from` (or still open), started at or before `to`.
    expect(starts(await uptime.downtimeEvents('site_a', { limit: 10, from: T0 + 60_000, to: T0 + HOUR }))).toEqual([
      1, 0,
    ]);
    expect(starts(await uptime.downtimeEvents('site_a', { limit: 10, from: T0 + 60_001 }))).toEqual([2, 1]);
    expect(starts(await uptime.downtimeEvents('site_a', { limit: 10, from: T0 + 3 * HOUR }))).toEqual([2]);
  });

  it('writes a batch of probes with the buffered statuses, each only over an older status', async () => {
    const { uptime } = await withSites('site_a', 'site_b', 'site_c');
    for (const id of ['site_a', 'site_b', 'site_c']) await uptime.ensureMonitor(id, T0);
    // site_b went down (written at once) after the batch's "up" was decided: the batch lands later.
    await uptime.recordTransition('site_b', {
      status: 'down',
      since: T0 + 20,
      open: { startedAt: T0 + 20, cause: 'timeout' },
    });
    const batch = [
      probe('site_a', T0 + 10),
      probe('site_b', T0 + 10, { up: false, httpStatus: null, responseMs: null, cause: 'timeout' }),
      probe('site_c', T0 + 11, { certificateExpiresAt: T0 + 90 * DAY }),
    ];
    await uptime.insertProbes(batch, [
      { siteId: 'site_a', status: 'up', since: T0 + 10 },
      { siteId: 'site_b', status: 'up', since: T0 + 10 },
      { siteId: 'site_gone', status: 'up', since: T0 + 10 },
    ]);
    expect(await uptime.findMonitor('site_a')).toMatchObject({
      status: 'up',
      statusSince: T0 + 10,
      updatedAt: T0 + 10,
    });
    expect(await uptime.findMonitor('site_b')).toMatchObject({ status: 'down', statusSince: T0 + 20 });
    expect(await uptime.findMonitor('site_c')).toMatchObject({ status: 'unknown', statusSince: null });
    expect(await uptime.probesSince(T0)).toEqual(batch);
    expect(await uptime.probesSince(T0 + 11)).toEqual([batch[2]]);
    expect(await uptime.countProbes()).toBe(3);
    await uptime.insertProbes([]);
    await uptime.insertProbes([], [{ siteId: 'site_c', status: 'up', since: T0 + 30 }]);
    expect(await uptime.findMonitor('site_c')).toMatchObject({ status: 'up', statusSince: T0 + 30 });
    expect(await uptime.countProbes()).toBe(3);
  });

  it('writes a batch larger than one statement takes', async () => {
    const { uptime } = await withSites('site_a');
    const batch = Array.from({ length: 2_500 }, (_, i) => probe('site_a', T0 + i, { up: i % 3 !== 0 }));
    await uptime.insertProbes(batch);
    expect(await uptime.countProbes()).toBe(2_500);
    expect(await uptime.probesSince(T0)).toEqual(batch);
  });

  it('adds closed hours into the hourly roll-up, in one write with its mark', async () => {
    const { uptime } = await withSites('site_a', 'site_b');
    expect(await uptime.mark('hourly')).toBe(0);
    await uptime.addHourly(
      [
        bucket('site_a', T0),
        bucket('site_b', T0, { responseMin: null, responseMax: null, responseCount: 0, responseSum: 0 }),
      ],
      T0 + HOUR,
    );
    expect(await uptime.mark('hourly')).toBe(T0 + HOUR);
    // A late probe's hour added again (twice in one batch), and an hour of site_b that had no answers.
    await uptime.addHourly(
      [
        bucket('site_a', T0, { up: 1, down: 1, responseSum: 30, responseCount: 1, responseMin: 30, responseMax: 30 }),
        bucket('site_a', T0, {
          up: 0,
          down: 1,
          responseSum: 900,
          responseCount: 1,
          responseMin: 900,
          responseMax: 900,
        }),
        bucket('site_b', T0, { up: 2, responseSum: 200, responseCount: 2, responseMin: 70, responseMax: 130 }),
        bucket('site_a', T0 + HOUR),
      ],
      T0 + 2 * HOUR,
    );
    expect(await uptime.hourly('site_a', T0)).toEqual([
      bucket('site_a', T0, {
        up: 61,
        down: 2,
        responseSum: 6930,
        responseCount: 62,
        responseMin: 30,
        responseMax: 900,
      }),
      bucket('site_a', T0 + HOUR),
    ]);
    expect(await uptime.hourly('site_a', T0 + 1)).toEqual([bucket('site_a', T0 + HOUR)]);
    expect(await uptime.hourly('site_b', 0)).toEqual([
      bucket('site_b', T0, { up: 62, responseSum: 200, responseCount: 2, responseMin: 70, responseMax: 130 }),
    ]);
    expect(await uptime.mark('hourly')).toBe(T0 + 2 * HOUR);
    expect(await uptime.mark('daily')).toBe(0);
  });

  it('re-derives hours from the raw probes of monitored sites, replacing what was written', async () => {
    const { uptime } = await withSites('site_a', 'site_b');
    await uptime.ensureMonitor('site_a', T0);
    await uptime.addHourly([bucket('site_a', T0, { up: 999 })], T0);
    await uptime.insertProbes([
      probe('site_a', T0 + 1, { responseMs: 100 }),
      probe('site_a', T0 + 2, { up: false, responseMs: null, cause: 'timeout' }),
      probe('site_a', T0 + 3, { up: false, responseMs: 300, cause: 'http_status' }),
      probe('site_a', T0 + HOUR + 5, { responseMs: 40 }),
      probe('site_a', T0 + 2 * HOUR, { responseMs: 1 }),
      probe('site_b', T0 + 1),
    ]);
    await uptime.rebuildHourly(T0, T0 + 2 * HOUR);
    expect(await uptime.hourly('site_a', 0)).toEqual([
      {
        siteId: 'site_a',
        bucket: T0,
        up: 1,
        down: 2,
        responseSum: 400,
        responseCount: 2,
        responseMin: 100,
        responseMax: 300,
      },
      {
        siteId: 'site_a',
        bucket: T0 + HOUR,
        up: 1,
        down: 0,
        responseSum: 40,
        responseCount: 1,
        responseMin: 40,
        responseMax: 40,
      },
    ]);
    // site_b has no monitor (not being monitored): its probes are left out.
    expect(await uptime.hourly('site_b', 0)).toEqual([]);
    expect(await uptime.mark('hourly')).toBe(T0 + 2 * HOUR);
  });

  it('rolls a day of monitored sites up into one row each, replacing what was written', async () => {
    const { uptime } = await withSites('site_a', 'site_b');
    await uptime.ensureMonitor('site_a', T0);
    await uptime.addHourly(
      [
        bucket('site_a', T0, {
          up: 50,
          down: 10,
          responseSum: 500,
          responseCount: 5,
          responseMin: 20,
          responseMax: 400,
        }),
        bucket('site_a', T0 + 23 * HOUR, { responseMin: null, responseMax: null, responseSum: 0, responseCount: 0 }),
        bucket('site_a', T0 + DAY),
        bucket('site_b', T0),
      ],
      T0 + DAY,
    );
    await uptime.rollupDay(T0, T0 + DAY);
    await uptime.rollupDay(T0, T0 + DAY);
    expect(await dailyRows()).toEqual([
      bucket('site_a', T0, {
        up: 110,
        down: 10,
        responseSum: 500,
        responseCount: 5,
        responseMin: 20,
        responseMax: 400,
      }),
    ]);
    expect(await uptime.mark('daily')).toBe(T0 + DAY);
  });

  it('counts up and down since each of several times in one read of the hours', async () => {
    const { uptime } = await withSites('site_a', 'site_b');
    await uptime.addHourly(
      [
        bucket('site_a', T0 - 20 * DAY, { up: 1, down: 2 }),
        bucket('site_a', T0 - 3 * DAY, { up: 10, down: 20 }),
        bucket('site_a', T0 - HOUR, { up: 100, down: 200 }),
        bucket('site_b', T0 - HOUR, { up: 7, down: 7 }),
      ],
      T0,
    );
    expect(await uptime.totalsSince('site_a', [T0 - DAY, T0 - 7 * DAY, T0 - 30 * DAY])).toEqual([
      { up: 100, down: 200 },
      { up: 110, down: 220 },
      { up: 111, down: 222 },
    ]);
    expect(await uptime.totalsSince('site_none', [T0 - DAY])).toEqual([{ up: 0, down: 0 }]);
    // Before a mark: the hours at or after it are left to the raw probes (cluster mode's report).
    expect(await uptime.totalsSince('site_a', [T0 - DAY, T0 - 30 * DAY], T0 - HOUR)).toEqual([
      { up: 0, down: 0 },
      { up: 11, down: 22 },
    ]);
  });

  it('answers connected sites’ statuses with their latest probe, a site’s latest probes and its raw hours', async () => {
    const { uptime, sites } = await withSites('site_a', 'site_b', 'site_c', 'site_pending');
    for (const id of ['site_a', 'site_b', 'site_c']) await uptime.ensureMonitor(id, T0);
    await uptime.updateMonitor('site_b', { status: 'down', statusSince: T0 + 5, paused: true, updatedAt: T0 + 5 });
    await uptime.insertProbes([
      probe('site_a', T0 + 1_000, { responseMs: 80 }),
      probe('site_a', T0 + 61_000, { responseMs: 120 }),
      probe('site_b', T0 + 2_000, { up: false, httpStatus: 500, responseMs: null, cause: 'status' }),
      probe('site_a', T0 + HOUR + 1_000, { up: false, responseMs: null, cause: 'timeout' }),
      probe('site_gone', T0 + 3_000),
    ]);
    // A monitor of a site no longer connected answers no status.
    await sites.update('site_c', { state: 'pending' });
    const statuses = await uptime.statuses(['site_a', 'site_b', 'site_c', 'site_pending', 'site_gone']);
    expect(statuses.sort((a, b) => a.siteId.localeCompare(b.siteId))).toEqual([
      {
        siteId: 'site_a',
        status: 'unknown',
        statusSince: null,
        paused: false,
        lastCheckedAt: T0 + HOUR + 1_000,
        responseMs: null,
      },
      {
        siteId: 'site_b',
        status: 'down',
        statusSince: T0 + 5,
        paused: true,
        lastCheckedAt: T0 + 2_000,
        responseMs: null,
      },
    ]);
    expect(await uptime.statuses([])).toEqual([]);

    const recent = await uptime.recentProbes('site_a', 2);
    expect(recent.map((row) => [row.at, row.up, row.responseMs])).toEqual([
      [T0 + 61_000, true, 120],
      [T0 + HOUR + 1_000, false, null],
    ]);
    expect(await uptime.recentProbes('site_none', 10)).toEqual([]);

    expect(await uptime.probeHours('site_a', T0)).toEqual([
      bucket('site_a', T0, { up: 2, down: 0, responseSum: 200, responseCount: 2, responseMin: 80, responseMax: 120 }),
      bucket('site_a', T0 + HOUR, {
        up: 0,
        down: 1,
        responseSum: 0,
        responseCount: 0,
        responseMin: null,
        responseMax: null,
      }),
    ]);
    expect(await uptime.probeHours('site_a', T0 + HOUR)).toHaveLength(1);
  });

  it('prunes raw probes oldest first a chunk at a time, and roll-ups and ended events by their retention', async () => {
    const { uptime } = await withSites('site_a');
    await uptime.ensureMonitor('site_a', T0);
    await uptime.insertProbes(Array.from({ length: 5 }, (_, i) => probe('site_a', T0 + (4 - i) * 1000)));
    expect(await uptime.pruneRawChunk(T0 + 3500, 2)).toBe(2);
    expect((await uptime.probesSince(0)).map((p) => p.at - T0)).toEqual([2000, 3000, 4000]);
    expect(await uptime.pruneRawChunk(T0 + 3500, 2)).toBe(2);
    expect(await uptime.pruneRawChunk(T0 + 3500, 2)).toBe(0);
    expect((await uptime.probesSince(0)).map((p) => p.at - T0)).toEqual([4000]);

    await uptime.addHourly([bucket('site_a', T0 - 2 * HOUR), bucket('site_a', T0)], T0);
    await uptime.rollupDay(T0 - DAY, T0);
    await uptime.rollupDay(T0, T0 + DAY);
    await uptime.recordTransition('site_a', {
      status: 'down',
      since: T0 - DAY,
      open: { startedAt: T0 - DAY, cause: 'dns' },
    });
    await uptime.recordTransition('site_a', { status: 'up', since: T0 - DAY + 1, closeAt: T0 - DAY + 1 });
    await uptime.recordTransition('site_a', {
      status: 'down',
      since: T0 - DAY + 2,
      open: { startedAt: T0 - DAY + 2, cause: 'dns' },
    });
    await uptime.pruneRollups(T0 - HOUR, T0);
    expect((await uptime.hourly('site_a', 0)).map((row) => row.bucket)).toEqual([T0]);
    expect((await dailyRows()).map((row) => row.bucket)).toEqual([T0]);
    expect(await uptime.downtimeEvents('site_a', { limit: 10 })).toEqual([
      expect.objectContaining({ startedAt: T0 - DAY + 2, endedAt: null }),
    ]);
  });

  it('loses a removed site’s monitor, hours, days and events with it, and keeps its raw probes to age out', async () => {
    const { sites, uptime } = await withSites('site_a');
    await uptime.ensureMonitor('site_a', T0);
    await uptime.insertProbes([probe('site_a', T0)]);
    await uptime.addHourly([bucket('site_a', T0)], T0);
    await uptime.rollupDay(T0, T0 + DAY);
    await uptime.recordTransition('site_a', { status: 'down', since: T0, open: { startedAt: T0, cause: 'dns' } });
    await sites.delete('site_a');
    expect(await uptime.findMonitor('site_a')).toBeUndefined();
    expect(await uptime.hourly('site_a', 0)).toEqual([]);
    expect(await dailyRows()).toEqual([]);
    expect(await uptime.downtimeEvents('site_a', { limit: 10 })).toEqual([]);
    expect(await uptime.countProbes()).toBe(1);
  });

  it('keeps one monitor and one hour per site as their keys', async () => {
    const { uptime } = await withSites('site_a');
    const insertTwice = (query: ReturnType<typeof sql>) => rows(query).then(() => rows(query));
    await expect(
      insertTwice(sql`insert into uptime_monitors (site_id, updated_at) values ('site_a', 0) returning site_id`),
    ).rejects.toSatisfy(isUniqueViolation);
    await expect(
      insertTwice(
        sql`insert into uptime_hourly (site_id, bucket, up, down, response_sum, response_count) values ('site_a', 0, 1, 0, 0, 0) returning site_id`,
      ),
    ).rejects.toSatisfy(isUniqueViolation);
    expect(await uptime.hourly('site_a', 0)).toHaveLength(1);
  });
});
