import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';

/** Upgrading to migration 0012: updates already pending count as first seen at the site's last sync. */
const dir = mkdtempSync(join(tmpdir(), 'sitewarden-offers-migration-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('upgrading to update offers', () => {
  it('seeds the first sightings of pending plugin and theme updates from the last sync', () => {
    const migrations = join(dir, 'drizzle');
    cpSync(resolve(import.meta.dirname, '../../drizzle'), migrations, { recursive: true });
    const journalPath = join(migrations, 'meta/_journal.json');
    const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: { tag: string }[] };
    journal.entries = journal.entries.filter((entry) => entry.tag < '0012');
    writeFileSync(journalPath, JSON.stringify(journal));
    const path = join(dir, 'sitewarden.db');
    const sqlite = new Database(path);
    migrate(drizzle(sqlite), { migrationsFolder: migrations });
    for (const sql of [
      `insert into sites (id, url, rest_url, state, created_at, updated_at) values ('site_a', 'http://127.0.0.1:1', 'http://127.0.0.1:1/wp-json/', 'connected', 1000, 1000)`,
      `insert into site_inventories (site_id, plugins_json, themes_json, synced_at) values ('site_a', '[]', '[]', 5000)`,
      `insert into inventory_items (site_id, type, slug, name, version, update_version, active) values ('site_a', 'plugin', 'seo', 'SEO', '1.0', '2.0', 1)`,
      `insert into inventory_items (site_id, type, slug, name, version, update_version, active) values ('site_a', 'plugin', 'cache', 'Cache', '3.0', null, 1)`,
      `insert into inventory_items (site_id, type, slug, name, version, update_version, active) values ('site_a', 'theme', 'neat', 'Neat', '1.0', '1.1', 0)`,
    ])
      sqlite.prepare(sql).run();
    sqlite.close();

    const database = openDatabase(path);
    try {
      expect(
        database.sqlite.prepare('select type, slug, version, first_seen_at from update_offers order by slug').all(),
      ).toEqual([
        { type: 'theme', slug: 'neat', version: '1.1', first_seen_at: 5000 },
        { type: 'plugin', slug: 'seo', version: '2.0', first_seen_at: 5000 },
      ]);
    } finally {
      database.close();
    }
  });
});
