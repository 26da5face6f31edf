import { describe, expect, it } from 'vitest';
import { backups as pgBackups } from '../../src/backups/backups.pg-table.js';
import { backups as sqliteBackups } from '../../src/backups/backups.table.js';
import {
  createFleetOverviewQuery,
  OVERVIEW_PAGE_SIZE,
  type OverviewFilter,
} from '../../src/dashboard/fleet-overview.query.js';
import { tableFor } from '../../src/db/dialect.js';
import { inventoryItems as pgItems } from '../../src/inventory/inventory.pg-table.js';
import { inventoryItems as sqliteItems } from '../../src/inventory/inventory.table.js';
import { performanceAudits as pgAudits } from '../../src/performance/performance.pg-table.js';
import { performanceAudits as sqliteAudits } from '../../src/performance/performance.table.js';
import { ALL_SITES } from '../../src/shared/actor.js';
import { sites as pgSites, siteTags as pgSiteTags } from '../../src/sites/sites.pg-table.js';
import { sites as sqliteSites, siteTags as sqliteSiteTags } from '../../src/sites/sites.table.js';
import * as pgUptime from '../../src/uptime/uptime.pg-table.js';
import * as sqliteUptime from '../../src/uptime/uptime.table.js';
import { dialects, stateDatabaseFor } from '../support/dialects.js';

/**
 * The fleet overview's query on both dialects (issue 34, docs/design/cluster-state.md): counts, filters, sorts
 * (nulls where SQLite puts them), pages and the score trend, over `site_summaries` as its triggers keep it.
 */
const HOUR = 3_600_000;
const NOW = 200 * 24 * HOUR;
const FILLERS = 52;

describe.each(dialects)('the fleet overview on %s', (dialect) => {
  const state = stateDatabaseFor(dialect, 'fleet-overview');

  /**
   * Three sites the tests look at and enough others for a second page: s01 up with a score trend, a backup and
   * an update offered; s02 down, never scored, its backup failed, no connector, a name full of LIKE's wildcards;
   * s03 pending, scored on desktop only, never backed up.
   */
  async function seed() {
    const t = {
      sites: tableFor(dialect, { sqlite: sqliteSites, postgres: pgSites }),
      tags: tableFor(dialect, { sqlite: sqliteSiteTags, postgres: pgSiteTags }),
      monitors: tableFor(dialect, { sqlite: sqliteUptime.uptimeMonitors, postgres: pgUptime.uptimeMonitors }),
      hourly: tableFor(dialect, { sqlite: sqliteUptime.uptimeHourly, postgres: pgUptime.uptimeHourly }),
      audits: tableFor(dialect, { sqlite: sqliteAudits, postgres: pgAudits }),
      backups: tableFor(dialect, { sqlite: sqliteBackups, postgres: pgBackups }),
      items: tableFor(dialect, { sqlite: sqliteItems, postgres: pgItems }),
    };
    const site = (id: string, name: string | null, fields: Partial<typeof t.sites.$inferInsert> = {}) => ({
      id,
      url: `https://${id}.example.test`,
      restUrl: `https://${id}.example.test/wp-json/`,
      name,
      state: 'connected' as const,
      connectorVersion: '1.4.0',
      createdAt: new Date(NOW),
      updatedAt: new Date(NOW),
      ...fields,
    });
    const audit = (id: string, siteId: string, formFactor: 'mobile' | 'desktop', score: number) => ({
      id,
      siteId,
      url: `https://${siteId}.example.test/`,
      formFactor,
      trigger: 'scheduled' as const,
      runs: 1,
      status: 'completed' as const,
      queuedAt: new Date(NOW),
      scorePerformance: score,
    });
    await state().run(async (db) => {
      await db
        .insert(t.sites)
        .values([
          site('s01', 'Alpha'),
          site('s02', 'Bravo_%', { connectorVersion: null }),
          site('s03', 'Charlie', { state: 'pending' }),
          ...Array.from({ length: FILLERS }, (_, i) => site(`s${String(i + 10).padStart(2, '0')}`, `Filler ${i + 10}`)),
        ]);
      await db
        .insert(t.tags)
        .values([
          { siteId: 's01', tag: 'client-x' },
          ...['s01', 's02', 's03'].map((siteId) => ({ siteId, tag: 'core' })),
        ]);
      await db.insert(t.monitors).values([
        { siteId: 's01', status: 'up', updatedAt: NOW },
        { siteId: 's02', status: 'down', updatedAt: NOW },
      ]);
      await db.insert(t.hourly).values({
        siteId: 's01',
        bucket: NOW - HOUR,
        up: 60,
        down: 0,
        responseSum: 12_000,
        responseCount: 60,
        responseMin: 150,
        responseMax: 250,
      });
      // Fourteen mobile audits, oldest first (the trend keeps the newest twelve), and a newer desktop one.
      await db
        .insert(t.audits)
        .values([
          ...Array.from({ length: 14 }, (_, i) => audit(`aud_a${String(i).padStart(2, '0')}`, 's01', 'mobile', i / 20)),
          audit('aud_b00', 's01', 'desktop', 0.99),
          audit('aud_c00', 's03', 'desktop', 0.6),
          audit('aud_c01', 's03', 'desktop', 0.7),
        ]);
      await db.insert(t.backups).values([
        {
          id: 'bkp_1',
          siteId: 's01',
          kind: 'manual',
          status: 'completed',
          createdAt: new Date(NOW - 2 * HOUR),
          finishedAt: new Date(NOW - HOUR),
        },
        {
          id: 'bkp_2',
          siteId: 's02',
          kind: 'scheduled',
          status: 'failed',
          createdAt: new Date(NOW - 5 * HOUR),
          finishedAt: new Date(NOW - 4 * HOUR),
        },
      ]);
      await db.insert(t.items).values([
        { siteId: 's01', type: 'plugin', slug: 'seo', name: 'SEO', version: '1.0', updateVersion: '2.0', active: true },
        { siteId: 's02', type: 'plugin', slug: 'seo', name: 'SEO', version: '2.0', updateVersion: null, active: true },
      ]);
    });
    return createFleetOverviewQuery(state());
  }

  const filter = (fields: Partial<OverviewFilter> = {}): OverviewFilter => ({
    sort: 'name',
    descending: false,
    page: 1,
    ...fields,
  });

  it('counts the fleet, and a scoped user only their sites', async () => {
    const overview = await seed();
    expect(await overview.counts()).toEqual({
      sites: FILLERS + 3,
      down: 1,
      degraded: 0,
      updatesPending: 1,
      updatesUnknown: 1,
      backupsFailing: 1,
    });
    expect(await overview.counts({ kind: 'tags', tags: ['client-x'] })).toEqual({
      sites: 1,
      down: 0,
      degraded: 0,
      updatesPending: 1,
      updatesUnknown: 0,
      backupsFailing: 0,
    });
    expect(Object.values(await overview.counts({ kind: 'tags', tags: [] }))).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it('pages the fleet by name, and gives each row its facts and its newest scores first', async () => {
    const overview = await seed();
    const first = await overview.page(filter());
    expect(first.total).toBe(FILLERS + 3);
    expect(first.rows).toHaveLength(OVERVIEW_PAGE_SIZE);
    expect(first.rows.slice(0, 3).map((row) => row.id)).toEqual(['s01', 's02', 's03']);
    expect(first.rows[0]).toEqual({
      id: 's01',
      url: 'https://s01.example.test',
      name: 'Alpha',
      state: 'connected',
      status: 'up',
      syncError: null,
      connectorVersion: '1.4.0',
      updates: 1,
      score: 13 / 20,
      backupStatus: 'completed',
      backupAt: NOW - HOUR,
      uptime24h: 1,
      uptime30d: 1,
      responseMs: 200,
      scores: Array.from({ length: 12 }, (_, i) => (13 - i) / 20),
    });
    expect(first.rows[2]).toMatchObject({ id: 's03', status: 'pending', score: 0.7, scores: [0.7, 0.6] });
    const second = await overview.page(filter({ page: 2 }));
    expect(second.rows.map((row) => row.id)).toEqual(['s57', 's58', 's59', 's60', 's61']);
    expect(await overview.page(filter({ page: 3 }))).toEqual({ rows: [], total: FILLERS + 3 });
  });

  it('sorts with unknown values first ascending and last descending, a site never backed up the oldest', async () => {
    const overview = await seed();
    const ids = async (fields: Partial<OverviewFilter>) =>
      (await overview.page(filter({ tag: 'core', ...fields }))).rows.map((row) => row.id);
    expect(await ids({ sort: 'score' })).toEqual(['s02', 's01', 's03']);
    expect(await ids({ sort: 'score', descending: true })).toEqual(['s03', 's01', 's02']);
    expect(await ids({ sort: 'uptime24h' })).toEqual(['s02', 's03', 's01']);
    expect(await ids({ sort: 'uptime24h', descending: true })).toEqual(['s01', 's03', 's02']);
    expect(await ids({ sort: 'response', descending: true })).toEqual(['s01', 's03', 's02']);
    expect(await ids({ sort: 'status' })).toEqual(['s02', 's03', 's01']);
    expect(await ids({ sort: 'updates', descending: true })).toEqual(['s01', 's03', 's02']);
    expect(await ids({ sort: 'backup' })).toEqual(['s02', 's03', 's01']);
    expect(await ids({ sort: 'backupAge' })).toEqual(['s01', 's02', 's03']);
    expect(await ids({ sort: 'backupAge', descending: true })).toEqual(['s03', 's02', 's01']);
    expect(await ids({ sort: 'name', descending: true })).toEqual(['s03', 's02', 's01']);
  });

  it('filters by words ignoring case (wildcards taken as written), tag, status, updates and failed backups', async () => {
    const overview = await seed();
    const ids = async (fields: Partial<OverviewFilter>, scope = ALL_SITES) =>
      (await overview.page(filter(fields), scope)).rows.map((row) => row.id);
    expect(await ids({ q: 'ALPHA' })).toEqual(['s01']);
    expect(await ids({ q: '_%' })).toEqual(['s02']);
    expect(await ids({ q: 'S03.EXAMPLE' })).toEqual(['s03']);
    expect(await ids({ tag: 'client-x' })).toEqual(['s01']);
    expect(await ids({ status: 'down' })).toEqual(['s02']);
    expect(await ids({ status: 'pending' })).toEqual(['s03']);
    expect(await ids({ hasUpdates: true })).toEqual(['s01']);
    expect(await ids({ backupFailed: true })).toEqual(['s02']);
    expect(await ids({ q: 'filler 1' })).toHaveLength(10);
    expect(await ids({}, { kind: 'tags', tags: ['core'] })).toEqual(['s01', 's02', 's03']);
    expect(await ids({ q: 'a' }, { kind: 'tags', tags: ['client-x'] })).toEqual(['s01']);
    expect(await overview.page(filter(), { kind: 'tags', tags: [] })).toEqual({ rows: [], total: 0 });
  });
});
