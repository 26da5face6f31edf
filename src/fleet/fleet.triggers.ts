import { ADVISORY_LOCK_NAMESPACE } from '../db/state-db.js';
import { tableTriggers } from '../db/table-triggers.js';

/**
 * PostgreSQL: the advisory lock `(ADVISORY_LOCK_NAMESPACE, 2)` a transaction takes, until it ends, at its first
 * inventory item row written (below): the writers of item rows update the shared totals one transaction at a time.
 */
const FLEET_TOTALS_LOCK_KEY = 2;

/** One of the three row triggers on PostgreSQL: each runs the one function, which reads `TG_OP`. */
const countedOnPostgres = (name: string, event: 'INSERT' | 'DELETE' | 'UPDATE') => ({
  name,
  on: 'inventory_items',
  sql: `CREATE TRIGGER ${name} AFTER ${event} ON public.inventory_items FOR EACH ROW EXECUTE FUNCTION fleet_item_count()`,
});

/**
 * The triggers that keep `fleet_item_totals` and `fleet_item_versions` (fleet.table.ts) counted from
 * the inventory's rows (inventory/): the source of truth for what the database holds after all
 * migrations (0017 creates them; test/db/table-triggers.test.ts keeps the two equal). Each writes
 * both tables; they are declared under the first. On PostgreSQL (drizzle-pg/'s
 * `fleet_item_totals_triggers` migration; test/db/table-triggers.integration.test.ts) the same three
 * row triggers run one function: it counts the new row, then uncounts the old one, after taking the
 * transaction's turn at the totals (`FLEET_TOTALS_LOCK_KEY`: a site's write is several statements, whose row locks
 * on shared items would otherwise cross another's and deadlock).
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
  postgres: {
    functions: [
      {
        name: 'fleet_item_count',
        body: `
BEGIN
  PERFORM pg_advisory_xact_lock(${ADVISORY_LOCK_NAMESPACE}, ${FLEET_TOTALS_LOCK_KEY});
  IF TG_OP <> 'DELETE' THEN
    INSERT INTO fleet_item_totals AS t (type, slug, name, sites, active, with_update)
      VALUES (NEW.type, NEW.slug, NEW.name, 1, NEW.active::int, (NEW.update_version IS NOT NULL)::int)
      ON CONFLICT (type, slug) DO UPDATE SET name = excluded.name, sites = t.sites + 1,
        active = t.active + excluded.active, with_update = t.with_update + excluded.with_update;
    INSERT INTO fleet_item_versions AS v (type, slug, version, sites) VALUES (NEW.type, NEW.slug, NEW.version, 1)
      ON CONFLICT (type, slug, version) DO UPDATE SET sites = v.sites + 1;
  END IF;
  IF TG_OP <> 'INSERT' THEN
    UPDATE fleet_item_totals SET sites = sites - 1, active = active - OLD.active::int,
      with_update = with_update - (OLD.update_version IS NOT NULL)::int
      WHERE type = OLD.type AND slug = OLD.slug;
    DELETE FROM fleet_item_totals WHERE type = OLD.type AND slug = OLD.slug AND sites <= 0;
    UPDATE fleet_item_versions SET sites = sites - 1
      WHERE type = OLD.type AND slug = OLD.slug AND version = OLD.version;
    DELETE FROM fleet_item_versions
      WHERE type = OLD.type AND slug = OLD.slug AND version = OLD.version AND sites <= 0;
  END IF;
  RETURN NULL;
END
`,
      },
    ],
    triggers: [
      countedOnPostgres('fleet_item_counted', 'INSERT'),
      countedOnPostgres('fleet_item_uncounted', 'DELETE'),
      countedOnPostgres('fleet_item_recounted', 'UPDATE'),
    ],
  },
});
