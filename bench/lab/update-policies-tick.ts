/**
 * The update policies' minute tick at 10,000 sites × 30 plugins, every site under one of 100 tag
 * policies (sites in 24 time zones): a tick while no window is open, the tick at which every
 * window opens (plans, claims, one planned run per policy and window), and a tick later in the
 * same windows (nothing new to start). Answered from SQLite on a database file; no site is asked.
 *
 *   node --import tsx bench/lab/update-policies-tick.ts
 *   BENCH_SITES=1000 node --import tsx bench/lab/update-policies-tick.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { openDatabase } from '../../src/db/database.js';
import { writtenAtOnce } from '../../src/db/write-batch.js';
import { createInventoryRepository } from '../../src/inventory/inventory.repository.js';
import { createUpdateStateReader, type Plugin } from '../../src/inventory/index.js';
import { createFakeClock } from '../../src/shared/clock.js';
import { createEvents } from '../../src/shared/event-bus.js';
import { createId } from '../../src/shared/ids.js';
import { createSitesRepository } from '../../src/sites/sites.repository.js';
import { seedConnectedSite } from '../support/seed-sites.js';
import { sqliteStateOf } from '../../src/db/state-db.js';
import { createUpdatePoliciesRepository, createUpdatePoliciesService } from '../../src/update-policies/index.js';

const SITES = Number(process.env.BENCH_SITES ?? 10_000);
// Whole-hour offsets from UTC-11 to UTC+12, so windows open on the hour everywhere.
const ZONES = Array.from({ length: 24 }, (_, i) => i - 11).map((h) =>
  h === 0 ? 'UTC' : `UTC${h < 0 ? '-' : '+'}${String(Math.abs(h)).padStart(2, '0')}:00`,
);

const dir = mkdtempSync(join(tmpdir(), 'sitewarden-policy-bench-'));
try {
  const database = openDatabase(join(dir, 'sitewarden.db'));
  const db = database.db;
  const clock = createFakeClock(new Date('2026-01-14T00:00:00Z'));
  const state = sqliteStateOf(database);
  const sites = createSitesRepository(state);
  const inventories = createInventoryRepository(state);
  const seeding = performance.now();
  database.sqlite.transaction(() => {
    for (let s = 0; s < SITES; s++) {
      const id = createId('site', new Date(clock.now().getTime() + s));
      const now = clock.now();
      seedConnectedSite(db, { id, n: s, at: now, tags: [`client:${s % 100}`] });
      const plugins: Plugin[] = Array.from({ length: 30 }, (_, i) => ({
        slug: `plugin-${(s * 7 + i * 11) % 300}`,
        file: `plugin-${(s * 7 + i * 11) % 300}/p.php`,
        name: 'P',
        version: '1.0.0',
        status: 'active',
        update: (s + i) % 5 === 0 ? { version: '2.0.0' } : null,
      }));
      // Inside the seeding's own transaction: the synchronous write.
      writtenAtOnce(
        inventories.writeWithin(id, {
          plugins,
          themes: [],
          syncedAt: new Date(now.getTime() - 10 * 86_400_000),
          extras: {
            databaseType: 'mariadb',
            databaseVersion: '10.11.6',
            timeZone: ZONES[s % 24]!,
            coreOffers: [],
            translations: [],
          },
        }),
      );
    }
  })();
  const seeded = performance.now() - seeding;
  const repository = createUpdatePoliciesRepository(state);
  let runs = 0;
  const policies = createUpdatePoliciesService({
    repository,
    states: createUpdateStateReader(state),
    sites,
    applyUpdates: () => ({ id: `job_${++runs}` }),
    clock,
    events: createEvents(),
    logger: pino({ level: 'silent' }),
  });
  for (let c = 0; c < 100; c++)
    await policies.create({
      name: `client ${c}`,
      tag: `client:${c}`,
      priority: 0,
      enabled: true,
      kinds: { plugins: true, themes: false, coreMinor: false, coreMajor: false, translations: false },
      window: { days: ['wed'], start: '02:00', end: '04:00', timeZone: null },
      releaseDelayDays: 3,
      pins: [],
      ignore: [],
      safe: true,
    });

  const tick = async (label: string, at: string) => {
    clock.set(new Date(at));
    const cpu = process.cpuUsage();
    const start = performance.now();
    const started = await policies.tick();
    const used = process.cpuUsage(cpu);
    console.log(
      `${label.padEnd(44)} ${(performance.now() - start).toFixed(0).padStart(6)} ms  CPU ${((used.user + used.system) / 1000).toFixed(0).padStart(6)} ms  sites started ${started}`,
    );
  };
  console.log(
    `update-policy tick, ${SITES} sites × 30 plugins, 100 tag policies, 24 zones (seeded in ${(seeded / 1000).toFixed(1)} s), ${new Date().toISOString()}`,
  );
  await tick('no window open (Tuesday 12:00 UTC)', '2026-01-13T12:00:00Z');
  // 02:00 local in UTC+12 is 14:00 UTC on Tuesday: the first zone's windows open.
  await tick('windows open in one zone (1/24 of the sites)', '2026-01-13T14:00:00Z');
  await tick('the minute after (nothing new to start)', '2026-01-13T14:01:00Z');
  console.log(`bulk updates started: ${runs}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
