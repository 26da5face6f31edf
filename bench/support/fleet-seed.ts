import type Database from 'better-sqlite3';
import { performance } from 'node:perf_hooks';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * The dashboard benchmarks' fleet, written straight into the database: `SITES` connected sites with
 * tags (400 clients, a fifth `woocommerce`), uptime roll-ups (24 hours, 30 days), 20 inventory items
 * with some updates pending, 12 Lighthouse audits and 3 backups each. Returns how long it took (ms).
 */
export function seedFleet(sqlite: Database.Database, SITES: number): number {
  const now = Date.now();
  const started = performance.now();
  const site = sqlite.prepare(
    `insert into sites (id, url, rest_url, name, state, sync_error, wordpress_version, php_version, created_at, updated_at, connected_at)
     values (?, ?, ?, ?, 'connected', ?, '6.6.2', '8.2.0', ?, ?, ?)`,
  );
  const tag = sqlite.prepare('insert into site_tags (site_id, tag) values (?, ?)');
  const monitor = sqlite.prepare(
    `insert into uptime_monitors (site_id, status, status_since, updated_at) values (?, ?, ?, ?)`,
  );
  const hourly = sqlite.prepare(
    `insert into uptime_hourly (site_id, bucket, up, down, response_sum, response_count, response_min, response_max)
     values (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const daily = sqlite.prepare(
    `insert into uptime_daily (site_id, bucket, up, down, response_sum, response_count, response_min, response_max)
     values (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const item = sqlite.prepare(
    `insert into inventory_items (site_id, type, slug, name, version, update_version, active) values (?, ?, ?, ?, ?, ?, 1)`,
  );
  const audit = sqlite.prepare(
    `insert into performance_audits (id, site_id, url, form_factor, trigger, runs, status, queued_at, finished_at, score_performance)
     values (?, ?, ?, 'mobile', 'scheduled', 1, 'completed', ?, ?, ?)`,
  );
  const backup = sqlite.prepare(
    `insert into backups (id, site_id, kind, status, created_at, finished_at) values (?, ?, 'scheduled', ?, ?, ?)`,
  );
  const hourStart = now - (now % HOUR);
  const dayStart = now - (now % DAY);
  sqlite.transaction(() => {
    for (let i = 0; i < SITES; i++) {
      const id = `site_${String(i).padStart(6, '0')}`;
      const url = `https://client-${i % 400}.example/site-${i}`;
      site.run(id, url, `${url}/wp-json/`, `Site ${i}`, i % 97 === 0 ? 'timeout' : null, now, now, now);
      tag.run(id, `client-${i % 400}`);
      if (i % 5 === 0) tag.run(id, 'woocommerce');
      monitor.run(id, i % 211 === 0 ? 'down' : 'up', now - DAY, now);
      for (let h = 1; h <= 24; h++)
        hourly.run(id, hourStart - h * HOUR, 60, i % 50 === 0 && h === 3 ? 2 : 0, 60 * 300, 60, 120, 900);
      for (let d = 1; d <= 30; d++)
        daily.run(id, dayStart - d * DAY, 1440, i % 50 === 0 ? 5 : 0, 1440 * 300, 1440, 100, 1200);
      for (let p = 0; p < 20; p++)
        item.run(
          id,
          p < 16 ? 'plugin' : 'theme',
          `item-${p}`,
          `Item ${p}`,
          '1.0.0',
          (i + p) % 17 === 0 ? '1.1.0' : null,
        );
      for (let a = 0; a < 12; a++) {
        const at = now - (12 - a) * DAY;
        audit.run(`aud_${id}_${a}`, id, url, at, at + 30_000, 0.4 + ((i * 7 + a * 13) % 60) / 100);
      }
      for (let b = 0; b < 3; b++) {
        const at = now - (3 - b) * DAY;
        backup.run(`bkp_${id}_${b}`, id, b === 2 && i % 61 === 0 ? 'failed' : 'completed', at, at + 60_000);
      }
    }
  })();
  return performance.now() - started;
}
