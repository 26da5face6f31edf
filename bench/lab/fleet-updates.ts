/**
 * The fleet's pending-updates and inventory queries at 10,000 sites × 30 plugins (+ 3 themes),
 * answered from SQLite through the real routes (`app.request()`: query, grouping, JSON), on a
 * database file seeded by the inventory repository as the sync writes it; then a bulk update's
 * selection resolved from the same rows (every site, a tag). Not run by the tests.
 *
 *   node --import tsx bench/lab/fleet-updates.ts
 *   BENCH_SITES=1000 BENCH_RUNS=200 node --import tsx bench/lab/fleet-updates.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createBulkUpdatesRepository } from '../../src/bulk-updates/bulk-updates.repository.js';
import type { BulkUpdateInput } from '../../src/bulk-updates/bulk-updates.schemas.js';
import { resolveSelection } from '../../src/bulk-updates/selection.js';
import { openDatabase } from '../../src/db/database.js';
import { sqliteStateOf } from '../../src/db/state-db.js';
import { writtenAtOnce } from '../../src/db/write-batch.js';
import { createFleetRepository, createFleetRoutes } from '../../src/fleet/index.js';
import { createInventoryRepository } from '../../src/inventory/inventory.repository.js';
import type { Plugin, Theme } from '../../src/inventory/index.js';
import { createId } from '../../src/shared/ids.js';
import { seedConnectedSite } from '../support/seed-sites.js';

const SITES = Number(process.env.BENCH_SITES ?? 10_000);
const PLUGINS = 30;
const RUNS = Number(process.env.BENCH_RUNS ?? 300);

const dir = mkdtempSync(join(tmpdir(), 'sitewarden-fleet-bench-'));
try {
  const database = openDatabase(join(dir, 'sitewarden.db'));
  const state = sqliteStateOf(database);
  const inventories = createInventoryRepository(state);
  const seeding = performance.now();
  const now = new Date();
  database.sqlite.transaction(() => {
    for (let s = 0; s < SITES; s++) {
      const id = createId('site', new Date(now.getTime() + s));
      // 100 agencies' clients, and every tenth site staging.
      const tags = s % 10 === 0 ? [`client:${s % 100}`, 'staging'] : [`client:${s % 100}`];
      seedConnectedSite(database.db, { id, n: s, at: now, tags });
      // Each site draws its 30 plugins from a catalogue of 300; about one in five is behind.
      const plugins: Plugin[] = Array.from({ length: PLUGINS }, (_, i) => {
        const n = (s * 7 + i * 11) % 300;
        const behind = (s + i) % 5 === 0;
        return {
          slug: `plugin-${n}`,
          file: `plugin-${n}/plugin-${n}.php`,
          name: `Plugin ${n}`,
          version: behind ? `1.${s % 3}.0` : '2.0.0',
          status: i % 4 ? 'active' : 'inactive',
          update: behind ? { version: '2.0.0' } : null,
        };
      });
      const themes: Theme[] = ['one', 'two', 'three'].map((name, i) => ({
        slug: `theme-${name}`,
        name: `Theme ${name}`,
        version: '1.0',
        status: i === 0 ? 'active' : 'inactive',
        parent: null,
        update: (s + i) % 9 === 0 ? { version: '1.1' } : null,
      }));
      // Inside the seeding's own transaction: the synchronous write.
      writtenAtOnce(inventories.writeWithin(id, { plugins, themes, syncedAt: now }));
    }
  })();
  const seeded = performance.now() - seeding;
  // The bench asks only GET routes; a refresh that nothing calls.
  const fleetRefresh = { refresh: async () => ({ selected: 0, queued: 0 }) };
  const app = createFleetRoutes({ fleet: createFleetRepository(state), fleetRefresh });

  const scenarios = [
    '/fleet/updates?groupBy=item',
    '/fleet/updates?groupBy=item&tag=client:42',
    '/fleet/updates?groupBy=item&type=theme',
    '/fleet/updates?groupBy=site',
    '/fleet/updates?groupBy=site&tag=staging',
    '/fleet/plugins',
    '/fleet/plugins?tag=client:42',
    '/fleet/plugins/plugin-7',
  ];
  console.log(`fleet at ${SITES} sites × ${PLUGINS} plugins + 3 themes (seeded in ${(seeded / 1000).toFixed(1)} s)`);
  console.log('query                                         p50 ms   p99 ms   max ms   items');
  for (const path of scenarios) {
    const times: number[] = [];
    let items = 0;
    for (let run = 0; run < RUNS + 10; run++) {
      const started = performance.now();
      const response = await app.request(path);
      const body = (await response.json()) as { items: unknown[] };
      const elapsed = performance.now() - started;
      if (response.status !== 200) throw new Error(`${path}: ${response.status}`);
      items = body.items.length;
      if (run >= 10) times.push(elapsed); // the first runs warm SQLite's page cache and V8
    }
    times.sort((a, b) => a - b);
    const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(2);
    console.log(
      `${path.padEnd(45)} ${at(0.5).padStart(6)}   ${at(0.99).padStart(6)}   ${at(1).padStart(6)}   ${items}`,
    );
  }

  // A bulk update's selection as `POST /api/fleet/updates/apply` resolves it (its sites, then their pending updates from
  // the inventory rows), and the sites its plan reads again by id: SQL and rows, before any job is written.
  const bulkRepository = createBulkUpdatesRepository(state);
  const selections: [string, BulkUpdateInput][] = [
    ['every pending update of every site', { all: true, tag: [] }],
    ['a tag (client:42)', { tag: ['client:42'] }],
    ['a tag (staging)', { tag: ['staging'] }],
  ];
  // (a few dozen runs each: their slowest, not a p99)
  console.log('bulk selection                                p50 ms   max ms   targets   sites');
  for (const [name, input] of selections) {
    const times: number[] = [];
    let targets = 0;
    let sites = 0;
    const runs = Math.max(20, Math.round(RUNS / 10));
    for (let run = 0; run < runs + 3; run++) {
      const started = performance.now();
      const resolved = await resolveSelection(bulkRepository, input);
      sites = (await bulkRepository.sites({ ids: [...new Set(resolved.map((target) => target.siteId))] })).length;
      const elapsed = performance.now() - started;
      targets = resolved.length;
      if (run >= 3) times.push(elapsed);
    }
    times.sort((a, b) => a - b);
    const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(2);
    console.log(
      `${name.padEnd(45)} ${at(0.5).padStart(6)}   ${at(1).padStart(6)}   ${String(targets).padStart(7)}   ${sites}`,
    );
  }
  database.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
