import { tableTriggers } from '../db/table-triggers.js';

/**
 * The triggers that keep `fleet_item_totals` and `fleet_item_versions` (fleet.table.ts) counted from
 * the inventory's rows (inventory/): the source of truth for what the database holds after all
 * migrations (0017 creates them; test/db/table-triggers.test.ts keeps the two equal). Each writes
 * both tables; they are declared under the first.
 */
export const fleetItemTotalsTriggers = tableTriggers({
  table: 'fleet_item_totals',
  module: 'fleet/',
  what: 'each plugin and theme counted across the fleet (sites, active, with an update) and per version (`fleet_item_versions`)',
  views: [],
  triggers: [
    {
      name: 'fleet_item_counted',
      on: 'inventory_items',
      onModule: 'inventory/',
      sql: `CREATE TRIGGER fleet_item_counted AFTER INSERT ON inventory_items BEGIN
  INSERT INTO fleet_item_totals (type, slug, name, sites, active, with_update)
    VALUES (new.type, new.slug, new.name, 1, new.active, new.update_version IS NOT NULL)
    ON CONFLICT (type, slug) DO UPDATE SET name = excluded.name, sites = sites + 1,
      active = active + excluded.active, with_update = with_update + excluded.with_update;
  INSERT INTO fleet_item_versions (type, slug, version, sites) VALUES (new.type, new.slug, new.version, 1)
    ON CONFLICT (type, slug, version) DO UPDATE SET sites = sites + 1;
END`,
    },
    {
      name: 'fleet_item_uncounted',
      on: 'inventory_items',
      onModule: 'inventory/',
      sql: `CREATE TRIGGER fleet_item_uncounted AFTER DELETE ON inventory_items BEGIN
  UPDATE fleet_item_totals SET sites = sites - 1, active = active - old.active,
    with_update = with_update - (old.update_version IS NOT NULL)
    WHERE type = old.type AND slug = old.slug;
  DELETE FROM fleet_item_totals WHERE type = old.type AND slug = old.slug AND sites <= 0;
  UPDATE fleet_item_versions SET sites = sites - 1
    WHERE type = old.type AND slug = old.slug AND version = old.version;
  DELETE FROM fleet_item_versions
    WHERE type = old.type AND slug = old.slug AND version = old.version AND sites <= 0;
END`,
    },
    {
      name: 'fleet_item_recounted',
      on: 'inventory_items',
      onModule: 'inventory/',
      sql: `CREATE TRIGGER fleet_item_recounted AFTER UPDATE ON inventory_items BEGIN
  UPDATE fleet_item_totals SET sites = sites - 1, active = active - old.active,
    with_update = with_update - (old.update_version IS NOT NULL)
    WHERE type = old.type AND slug = old.slug;
  DELETE FROM fleet_item_totals WHERE type = old.type AND slug = old.slug AND sites <= 0;
  UPDATE fleet_item_versions SET sites = sites - 1
    WHERE type = old.type AND slug = old.slug AND version = old.version;
  DELETE FROM fleet_item_versions
    WHERE type = old.type AND slug = old.slug AND version = old.version AND sites <= 0;
  INSERT INTO fleet_item_totals (type, slug, name, sites, active, with_update)
    VALUES (new.type, new.slug, new.name, 1, new.active, new.update_version IS NOT NULL)
    ON CONFLICT (type, slug) DO UPDATE SET name = excluded.name, sites = sites + 1,
      active = active + excluded.active, with_update = with_update + excluded.with_update;
  INSERT INTO fleet_item_versions (type, slug, version, sites) VALUES (new.type, new.slug, new.version, 1)
    ON CONFLICT (type, slug, version) DO UPDATE SET sites = sites + 1;
END`,
    },
  ],
});
