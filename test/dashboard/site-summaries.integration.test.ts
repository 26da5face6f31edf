import { readdirSync, readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { createBackupsRepository } from '../../src/backups/backups.repository.js';
import * as backupTables from '../../src/backups/backups.pg-table.js';
import * as sqliteBackupTables from '../../src/backups/backups.table.js';
import { siteSummaries as pgSiteSummaries } from '../../src/dashboard/site-summaries.pg-table.js';
import { siteSummaries as sqliteSiteSummaries } from '../../src/dashboard/site-summaries.table.js';
import { tableFor } from '../../src/db/dialect.js';
import type { StateDatabase, StateDb } from '../../src/db/state-db.js';
import * as inventoryTables from '../../src/inventory/inventory.pg-table.js';
import { createInventoryRepository } from '../../src/inventory/inventory.repository.js';
import type { Plugin } from '../../src/inventory/inventory.schemas.js';
import * as sqliteInventoryTables from '../../src/inventory/inventory.table.js';
import { performanceAudits as pgAudits } from '../../src/performance/performance.pg-table.js';
import { createPerformanceRepository } from '../../src/performance/performance.repository.js';
import { performanceAudits as sqliteAudits, type NewAuditRow } from '../../src/performance/performance.table.js';
import { sites as pgSites } from '../../src/sites/sites.pg-table.js';
import { createSitesRepository } from '../../src/sites/sites.repository.js';
import { sites as sqliteSites } from '../../src/sites/sites.table.js';
import * as uptimeTables from '../../src/uptime/uptime.pg-table.js';
import { createUptimeRepository } from '../../src/uptime/uptime.repository.js';
import * as sqliteUptimeTables from '../../src/uptime/uptime.table.js';
import { dialects, stateDatabaseFor, type RowsOf } from '../support/dialects.js';

/**
 * The fleet overview's read model on both dialects (issue 34, docs/design/cluster-state.md): `site_summaries`
 * kept by triggers (SQLite's, and the PostgreSQL twins of drizzle-pg/0015) while the features write their own
 * rows through their real repositories, which on PostgreSQL write several rows per statement (the inventory's
 * upsert and delete, uptime's roll-ups, retention). After every step each summary must equal what it
 * summarises, computed here from the features' rows.
 */
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const NOW = 400 * DAY + 5 * HOUR;
const at = (ms: number) => new Date(ms);

describe('the site_summaries tables of the two dialects', () => {
  it('give the overview the same rows', () => {
    expectTypeOf<RowsOf<typeof pgSiteSummaries>>().toEqualTypeOf<RowsOf<typeof sqliteSiteSummaries>>();
  });
});

/** What a site's summary must hold, from the features' rows (site-summaries.triggers.ts says the same in SQL). */
async function expectedSummaries(state: StateDatabase) {
  const d = state.dialect;
  const [sites, monitors, hourly, daily, audits, backups, items] = await state.run((db) =>
    Promise.all([
      db.select().from(tableFor(d, { sqlite: sqliteSites, postgres: pgSites })),
      db
        .select()
        .from(tableFor(d, { sqlite: sqliteUptimeTables.uptimeMonitors, postgres: uptimeTables.uptimeMonitors })),
      db.select().from(tableFor(d, { sqlite: sqliteUptimeTables.uptimeHourly, postgres: uptimeTables.uptimeHourly })),
      db.select().from(tableFor(d, { sqlite: sqliteUptimeTables.uptimeDaily, postgres: uptimeTables.uptimeDaily })),
      db.select().from(tableFor(d, { sqlite: sqliteAudits, postgres: pgAudits })),
      db.select().from(tableFor(d, { sqlite: sqliteBackupTables.backups, postgres: backupTables.backups })),
      db
        .select()
        .from(tableFor(d, { sqlite: sqliteInventoryTables.inventoryItems, postgres: inventoryTables.inventoryItems })),
    ]),
  );
  const ratio = (rows: { up: number; down: number }[]) => {
    const total = rows.reduce((sum, row) => sum + row.up + row.down, 0);
    return total > 0 ? rows.reduce((sum, row) => sum + row.up, 0) / total : null;
  };
  const newest = <T extends { id: string }>(rows: T[]) => rows.sort((a, b) => (a.id < b.id ? 1 : -1))[0];
  return sites
    .map((site) => {
      const hours = hourly.filter((h) => h.siteId === site.id).sort((a, b) => b.bucket - a.bucket);
      const latest = hours[0]?.bucket;
      const dayStart = latest === undefined ? undefined : latest - (latest % DAY);
      const scoreOf = (formFactor: string) =>
        newest(audits.filter((a) => a.siteId === site.id && a.formFactor === formFactor && a.status === 'completed'))
          ?.scorePerformance ?? null;
      const backup = newest(backups.filter((b) => b.siteId === site.id));
      const summary = {
        siteId: site.id,
        sortName: (site.name ?? site.url).toLowerCase(),
        state: site.state,
        syncFailing: site.syncError !== null,
        uptimeStatus: monitors.find((m) => m.siteId === site.id)?.status ?? 'unknown',
        uptime24h: latest === undefined ? null : ratio(hours.filter((h) => h.bucket > latest - DAY)),
        uptime30d:
          dayStart === undefined
            ? null
            : ratio([
                ...daily.filter((d) => d.siteId === site.id && d.bucket > dayStart - 30 * DAY),
                ...hours.filter((h) => h.bucket >= dayStart),
              ]),
        responseMs: hours[0]?.responseCount ? Math.trunc(hours[0].responseSum / hours[0].responseCount) : null,
        score: scoreOf('mobile') ?? scoreOf('desktop'),
        updates: items.filter((i) => i.siteId === site.id && i.updateVersion !== null).length,
        backupStatus: backup?.status ?? null,
        backupAt: backup ? (backup.finishedAt ?? backup.createdAt).getTime() : null,
      };
      const status =
        summary.state === 'pending'
          ? 'pending'
          : summary.uptimeStatus === 'down'
            ? 'down'
            : summary.uptimeStatus === 'up' && (summary.syncFailing || (summary.score !== null && summary.score < 0.5))
              ? 'degraded'
              : summary.uptimeStatus;
      const statusRank = ({ down: 0, degraded: 1, unknown: 2, pending: 3 } as Record<string, number>)[status] ?? 4;
      const backupRank = summary.backupStatus === 'failed' ? 0 : summary.backupStatus === null ? 1 : 2;
      return { ...summary, status, statusRank, backupRank };
    })
    .sort((a, b) => (a.siteId < b.siteId ? -1 : 1));
}

const summariesOf = async (state: StateDatabase) => {
  const table = tableFor(state.dialect, { sqlite: sqliteSiteSummaries, postgres: pgSiteSummaries });
  return (await state.run((db) => db.select().from(table))).sort((a, b) => (a.siteId < b.siteId ? -1 : 1));
};

const plugin = (slug: string, version: string, update: string | null): Plugin => ({
  slug,
  file: `${slug}/${slug}.php`,
  name: `Plugin ${slug}`,
  version,
  status: 'active',
  update: update ? { version: update } : null,
});

const audit = (id: string, siteId: string, fields: Partial<NewAuditRow>): NewAuditRow => ({
  id,
  siteId,
  url: `https://${siteId}.example.test/`,
  formFactor: 'mobile',
  trigger: 'manual',
  runs: 1,
  status: 'completed',
  queuedAt: at(NOW),
  ...fields,
});

describe.each(dialects)('site_summaries on %s', (dialect) => {
  const state = stateDatabaseFor(dialect, 'site-summaries');

  /** After each step: every site's summary is what its features' rows say, and no other summary is left. */
  const summariesHold = async () => expect(await summariesOf(state())).toEqual(await expectedSummaries(state()));

  it('follows a site connected, its inventory written and rewritten, probes rolled up, an audit, a backup and its removal', async () => {
    const sites = createSitesRepository(state());
    const inventories = createInventoryRepository(state());
    const uptime = createUptimeRepository(state());
    const performance = createPerformanceRepository(state());
    const backups = createBackupsRepository(state());
    const site = (id: string, fields: { name?: string; state?: 'pending' | 'connected' } = {}) =>
      sites.insert({
        id,
        url: `https://${id.toUpperCase()}.example.test`,
        restUrl: `https://${id}.example.test/wp-json/`,
        state: 'connected',
        createdAt: at(NOW),
        updatedAt: at(NOW),
        ...fields,
      });

    await site('site_a', { name: 'Alpha Shop' });
    await site('site_b', { state: 'pending' });
    await site('site_c', { name: 'Charlie' });
    await summariesHold();
    expect((await summariesOf(state()))[1]).toMatchObject({
      sortName: 'https://site_b.example.test',
      status: 'pending',
    });

    await sites.update('site_b', { state: 'connected', name: 'Bravo', syncError: 'timeout' });
    await summariesHold();
    await sites.update('site_b', { syncError: null });

    // A sync writes the items, a later one changes an offer's version, clears one, adds one and drops one.
    const lists = (plugins: Plugin[]) => ({ plugins, themes: [], syncedAt: at(NOW) });
    await inventories.write('site_a', lists([plugin('seo', '1.0', '2.0'), plugin('cache', '1.0', '1.1')]));
    await inventories.write('site_c', lists([plugin('seo', '1.0', null), plugin('forms', '3.0', '3.1')]));
    await summariesHold();
    expect((await summariesOf(state()))[0]!.updates).toBe(2);
    await inventories.write(
      'site_a',
      lists([plugin('seo', '1.0', '2.1'), plugin('cache', '1.1', null), plugin('shop', '5.0', '5.2')]),
    );
    await inventories.write('site_c', lists([plugin('seo', '1.0', '1.2')]));
    await summariesHold();
    expect((await summariesOf(state())).map((s) => s.updates)).toEqual([2, 0, 1]);

    // Monitors, a second's probes with a status change, the hours closed, rebuilt and rolled into a day.
    for (const id of ['site_a', 'site_b', 'site_c']) await uptime.ensureMonitor(id, NOW);
    await summariesHold();
    const hour = NOW - (NOW % HOUR);
    const probe = (siteId: string, ms: number, up: boolean, responseMs: number) => ({
      siteId,
      at: ms,
      up,
      httpStatus: up ? 200 : 503,
      responseMs,
      cause: up ? null : 'http_status',
      certificateExpiresAt: null,
    });
    await uptime.insertProbes(
      [probe('site_a', hour - 2 * HOUR, true, 300), probe('site_a', hour - 2 * HOUR + 60_000, false, 900)],
      [{ siteId: 'site_a', status: 'up', since: hour - 2 * HOUR }],
    );
    await uptime.recordTransition('site_c', {
      status: 'down',
      since: hour - HOUR,
      open: { startedAt: hour - HOUR, cause: 'timeout' },
    });
    await summariesHold();
    const bucket = (siteId: string, start: number, up: number, down: number) => ({
      siteId,
      bucket: start,
      up,
      down,
      responseSum: 250 * (up + down),
      responseCount: up + down,
      responseMin: 100,
      responseMax: 400,
    });
    await uptime.addHourly(
      [
        bucket('site_b', hour - DAY - HOUR, 10, 50),
        bucket('site_b', hour - HOUR, 50, 10),
        bucket('site_c', hour, 7, 3),
      ],
      hour,
    );
    await summariesHold();
    // An hour given again adds into it (an update of the roll-up row).
    await uptime.addHourly([bucket('site_b', hour - HOUR, 0, 60), bucket('site_c', hour, 1, 0)], hour + HOUR);
    await summariesHold();
    await uptime.rebuildHourly(hour - 3 * HOUR, hour);
    await summariesHold();
    const today = hour - (hour % DAY);
    await uptime.rollupDay(today - DAY, today);
    await uptime.rollupDay(today - 2 * DAY, today - DAY);
    await summariesHold();

    // Audits: one completed as written, one queued, started and completed, a desktop one beside them.
    await performance.insert(audit('aud_01', 'site_a', { formFactor: 'desktop', scorePerformance: 0.9 }));
    await summariesHold();
    await performance.insert(audit('aud_02', 'site_a', { status: 'queued' }));
    await performance.start('aud_02', at(NOW));
    await summariesHold();
    await performance.update('aud_02', { status: 'completed', scorePerformance: 0.42, finishedAt: at(NOW + 1) });
    await performance.insert(audit('aud_03', 'site_c', { scorePerformance: 0.8 }));
    await summariesHold();
    expect((await summariesOf(state()))[0]).toMatchObject({ score: 0.42, status: 'degraded' });

    // Backups: one running, then completed; a later one failed, then removed by retention.
    await backups.insertBackup({
      id: 'bkp_01',
      siteId: 'site_a',
      kind: 'manual',
      status: 'running',
      createdAt: at(NOW),
    });
    await summariesHold();
    await backups.updateBackup('bkp_01', { status: 'completed', finishedAt: at(NOW + 60_000) }, ['running']);
    await backups.insertBackup({
      id: 'bkp_02',
      siteId: 'site_a',
      kind: 'scheduled',
      status: 'failed',
      createdAt: at(NOW + HOUR),
      finishedAt: at(NOW + HOUR + 5),
    });
    await backups.insertBackup({
      id: 'bkp_03',
      siteId: 'site_c',
      kind: 'manual',
      status: 'running',
      createdAt: at(NOW),
    });
    await summariesHold();
    expect((await summariesOf(state()))[0]).toMatchObject({ backupStatus: 'failed', backupRank: 0 });
    await backups.deleteEndedBackups(['bkp_02', 'bkp_03']);
    await summariesHold();
    expect((await summariesOf(state()))[0]).toMatchObject({ backupStatus: 'completed', backupAt: NOW + 60_000 });

    // The site removed: its summary goes with it (the cascade), and the others' stay as they are.
    await sites.delete('site_a');
    await summariesHold();
    expect((await summariesOf(state())).map((s) => s.siteId)).toEqual(['site_b', 'site_c']);
  });

  it.runIf(dialect === 'postgres')(
    'of two transactions writing one site at once, the later one counts what the earlier committed',
    async () => {
      await createSitesRepository(state()).insert({
        id: 'site_a',
        url: 'https://a.example.test',
        restUrl: 'https://a.example.test/wp-json/',
        state: 'connected',
        createdAt: at(NOW),
        updatedAt: at(NOW),
      });
      const pending = (slug: string) => ({
        siteId: 'site_a',
        type: 'plugin' as const,
        slug,
        name: slug,
        version: '1.0',
        updateVersion: '2.0',
        active: true,
      });
      /**
       * The first writes and holds its transaction open; the second's write waits in its trigger for the first's
       * summary row, and once the first commits it must count the first's row too.
       */
      const race = async (
        firstWrite: (tx: StateDb) => Promise<unknown>,
        secondWrite: (tx: StateDb) => Promise<unknown>,
      ) => {
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        let written!: () => void;
        const firstWrote = new Promise<void>((resolve) => (written = resolve));
        const first = state().transaction(async (tx) => {
          await firstWrite(tx);
          written();
          await held;
        });
        await firstWrote;
        const second = state().transaction(secondWrite);
        await new Promise((resolve) => setTimeout(resolve, 300));
        release();
        await Promise.all([first, second]);
      };
      const items = inventoryTables.inventoryItems;
      await race(
        (tx) => tx.insert(items).values(pending('one')),
        (tx) => tx.insert(items).values(pending('two')),
      );
      // The newer audit first: the second's older one must not take the score back.
      await race(
        (tx) => tx.insert(pgAudits).values(audit('aud_02', 'site_a', { scorePerformance: 0.7 })),
        (tx) => tx.insert(pgAudits).values(audit('aud_01', 'site_a', { scorePerformance: 0.3 })),
      );
      expect((await summariesOf(state()))[0]).toMatchObject({ score: 0.7, updates: 2 });
      expect(await summariesOf(state())).toEqual(await expectedSummaries(state()));
    },
  );

  it.runIf(dialect === 'postgres')("the migration's backfill gives the rows the triggers gave", async () => {
    const sites = createSitesRepository(state());
    const uptime = createUptimeRepository(state());
    const performance = createPerformanceRepository(state());
    const backups = createBackupsRepository(state());
    const inventories = createInventoryRepository(state());
    for (let i = 0; i < 12; i++) {
      const id = `site_${String(i).padStart(2, '0')}`;
      await sites.insert({
        id,
        url: `https://${id}.example.test`,
        restUrl: `https://${id}.example.test/wp-json/`,
        name: i % 3 ? `Site ${i}` : null,
        state: i % 5 ? 'connected' : 'pending',
        syncError: i % 4 ? null : 'timeout',
        createdAt: at(NOW),
        updatedAt: at(NOW),
      });
      if (i % 6) await uptime.ensureMonitor(id, NOW);
      await uptime.addHourly(
        Array.from({ length: 30 }, (_, h) => ({
          siteId: id,
          bucket: NOW - (NOW % HOUR) - h * HOUR,
          up: 60 - (i % 3),
          down: i % 3,
          responseSum: 60 * (100 + i),
          responseCount: 60,
          responseMin: null,
          responseMax: null,
        })),
        NOW,
      );
      for (let n = 0; n < 3; n++) {
        await performance.insert(
          audit(`aud_${i}_${n}`, id, {
            formFactor: n === 1 ? 'desktop' : 'mobile',
            status: n === 2 && i % 2 ? 'failed' : 'completed',
            scorePerformance: ((i * 13 + n * 7) % 100) / 100,
          }),
        );
        await backups.insertBackup({
          id: `bkp_${i}_${n}`,
          siteId: id,
          kind: 'manual',
          status: n === 2 && i % 3 === 0 ? 'failed' : 'completed',
          createdAt: at(n * DAY),
          finishedAt: at(n * DAY + i),
        });
      }
      await inventories.write(id, {
        plugins: [plugin('seo', '1', i % 2 ? '2' : null), plugin('cache', '1', i % 3 ? '2' : null)],
        themes: [],
        syncedAt: at(NOW),
      });
    }
    await uptime.rollupDay(NOW - (NOW % DAY) - DAY, NOW - (NOW % DAY));
    const byTriggers = await summariesOf(state());
    expect(byTriggers).toEqual(await expectedSummaries(state()));

    // (the migration by its name: its number is the journal's)
    const migrations = new URL('../../drizzle-pg/', import.meta.url);
    const file = readdirSync(migrations).find((name) => name.endsWith('_site_summaries_triggers.sql'))!;
    const migration = readFileSync(new URL(file, migrations), 'utf8').split('--> statement-breakpoint');
    const backfill = migration.slice(migration.findIndex((statement) => statement.includes('-- Backfill')));
    expect(backfill).toHaveLength(2);
    await state().transaction(async (tx) => {
      await tx.execute(sql`delete from site_summaries`);
      for (const statement of backfill) await tx.execute(sql.raw(statement));
    });
    expect(await summariesOf(state())).toEqual(byTriggers);
  });
});
