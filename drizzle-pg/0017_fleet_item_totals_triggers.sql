-- The fleet's per-item totals and version counts follow the inventory's item rows (issue 34,
-- docs/design/cluster-state.md "Triggers on PostgreSQL"), as SQLite's fleet_item_counted, fleet_item_uncounted and
-- fleet_item_recounted keep them (src/fleet/fleet.triggers.ts): one function for the three, a row trigger each, so
-- every row a multi-row statement writes is counted (the inventory's upsert inserts some rows and updates others,
-- only those whose values changed; its delete takes those no longer listed; a site's removal takes its rows by
-- cascade). The counts move by increments, never by a recount. A site's write is a few statements, each locking
-- the totals rows of its items in its own order (the upsert's, then the delete's): two transactions writing sites
-- that share items would lock them in crossing orders and deadlock. So the function first takes a transaction's
-- advisory lock (ADVISORY_LOCK_NAMESPACE, FLEET_TOTALS_LOCK_KEY: src/fleet/fleet.triggers.ts), and the writers of
-- item rows take turns from their first item row to their commit. An update counts the new row before it uncounts
-- the old one: the item's totals row is kept, not deleted and made again. The rows already held are counted first.
INSERT INTO fleet_item_totals (type, slug, name, sites, active, with_update)
  SELECT type, slug, max(name), count(*), count(*) FILTER (WHERE active), count(update_version)
  FROM inventory_items GROUP BY type, slug;
--> statement-breakpoint
INSERT INTO fleet_item_versions (type, slug, version, sites)
  SELECT type, slug, version, count(*) FROM inventory_items GROUP BY type, slug, version;
--> statement-breakpoint
CREATE FUNCTION fleet_item_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(1398210560, 2);
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
$$;
--> statement-breakpoint
CREATE TRIGGER fleet_item_counted AFTER INSERT ON inventory_items
FOR EACH ROW EXECUTE FUNCTION fleet_item_count();
--> statement-breakpoint
CREATE TRIGGER fleet_item_uncounted AFTER DELETE ON inventory_items
FOR EACH ROW EXECUTE FUNCTION fleet_item_count();
--> statement-breakpoint
CREATE TRIGGER fleet_item_recounted AFTER UPDATE ON inventory_items
FOR EACH ROW EXECUTE FUNCTION fleet_item_count();
