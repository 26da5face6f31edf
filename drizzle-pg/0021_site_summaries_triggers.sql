-- The fleet overview's read model kept on PostgreSQL (issue 34, docs/design/cluster-state.md "Triggers on PostgreSQL"),
-- as SQLite's triggers keep it (src/dashboard/site-summaries.triggers.ts, where all of this is declared): each fact
-- follows its feature's table in the same transaction. Row triggers, the same twenty as SQLite's by name, so a
-- multi-row statement (the inventory's upsert and delete, uptime's roll-ups, retention) moves every site it touches.
-- The pending updates move by increments (two transactions writing one site's items both count); the figures, the
-- score and the last backup are read again after the summary row is locked, so of two transactions writing one
-- site's rows the later one reads the earlier's once it has committed.
CREATE VIEW site_summary_scores AS
  SELECT s.site_id, coalesce(
    (SELECT a.score_performance FROM performance_audits a
      WHERE a.site_id = s.site_id AND a.form_factor = 'mobile' AND a.status = 'completed' ORDER BY a.id DESC LIMIT 1),
    (SELECT a.score_performance FROM performance_audits a
      WHERE a.site_id = s.site_id AND a.form_factor = 'desktop' AND a.status = 'completed' ORDER BY a.id DESC LIMIT 1)
  ) AS score
  FROM site_summaries s;
--> statement-breakpoint
CREATE VIEW site_uptime_figures AS
  SELECT s.site_id,
    (SELECT CASE WHEN sum(h.up + h.down) > 0 THEN cast(sum(h.up) AS double precision) / sum(h.up + h.down) END FROM uptime_hourly h
      WHERE h.site_id = s.site_id AND h.bucket > (SELECT max(n.bucket) FROM uptime_hourly n WHERE n.site_id = s.site_id) - 86400000) AS uptime_24h,
    (SELECT CASE WHEN sum(r.up + r.down) > 0 THEN cast(sum(r.up) AS double precision) / sum(r.up + r.down) END FROM (
        SELECT d.up, d.down FROM uptime_daily d WHERE d.site_id = s.site_id
          AND d.bucket > (SELECT max(n.bucket) - max(n.bucket) % 86400000 FROM uptime_hourly n WHERE n.site_id = s.site_id) - 2592000000
        UNION ALL
        SELECT h.up, h.down FROM uptime_hourly h WHERE h.site_id = s.site_id
          AND h.bucket >= (SELECT max(n.bucket) - max(n.bucket) % 86400000 FROM uptime_hourly n WHERE n.site_id = s.site_id)) r) AS uptime_30d,
    (SELECT CASE WHEN h.response_count > 0 THEN h.response_sum / h.response_count END FROM uptime_hourly h
      WHERE h.site_id = s.site_id ORDER BY h.bucket DESC LIMIT 1) AS response_ms
  FROM site_summaries s;
--> statement-breakpoint
CREATE FUNCTION site_summaries_site() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO site_summaries (site_id, sort_name, state, sync_failing)
      VALUES (NEW.id, lower(coalesce(NEW.name, NEW.url)), NEW.state, NEW.sync_error IS NOT NULL)
      ON CONFLICT (site_id) DO UPDATE SET sort_name = excluded.sort_name, state = excluded.state, sync_failing = excluded.sync_failing;
  ELSE
    UPDATE site_summaries SET sort_name = lower(coalesce(NEW.name, NEW.url)), state = NEW.state,
      sync_failing = NEW.sync_error IS NOT NULL WHERE site_id = NEW.id;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE FUNCTION site_summaries_uptime_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    UPDATE site_summaries SET uptime_status = 'unknown' WHERE site_id = OLD.site_id;
  ELSE
    UPDATE site_summaries SET uptime_status = NEW.status WHERE site_id = NEW.site_id;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE FUNCTION site_summaries_uptime_figures() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM FROM site_summaries WHERE site_id = NEW.site_id FOR NO KEY UPDATE;
  UPDATE site_summaries SET (uptime_24h, uptime_30d, response_ms) = (SELECT f.uptime_24h, f.uptime_30d, f.response_ms
      FROM site_uptime_figures f WHERE f.site_id = NEW.site_id)
  WHERE site_id = NEW.site_id;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE FUNCTION site_summaries_score() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  site text := coalesce(NEW.site_id, OLD.site_id);
BEGIN
  PERFORM FROM site_summaries WHERE site_id = site FOR NO KEY UPDATE;
  UPDATE site_summaries SET score = (SELECT v.score FROM site_summary_scores v WHERE v.site_id = site)
  WHERE site_id = site;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE FUNCTION site_summaries_backup() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  site text := coalesce(NEW.site_id, OLD.site_id);
BEGIN
  PERFORM FROM site_summaries WHERE site_id = site FOR NO KEY UPDATE;
  UPDATE site_summaries SET (backup_status, backup_at) = (SELECT b.status,
      cast(extract(epoch FROM coalesce(b.finished_at, b.created_at)) * 1000 AS bigint)
      FROM backups b WHERE b.site_id = site ORDER BY b.id DESC LIMIT 1)
  WHERE site_id = site;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE FUNCTION site_summaries_updates() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' AND OLD.update_version IS NOT NULL THEN
    UPDATE site_summaries SET updates = updates - 1 WHERE site_id = OLD.site_id;
  END IF;
  IF TG_OP <> 'DELETE' AND NEW.update_version IS NOT NULL THEN
    UPDATE site_summaries SET updates = updates + 1 WHERE site_id = NEW.site_id;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER site_summaries_site_insert AFTER INSERT ON sites
FOR EACH ROW EXECUTE FUNCTION site_summaries_site();
--> statement-breakpoint
CREATE TRIGGER site_summaries_site_update AFTER UPDATE OF name, url, state, sync_error ON sites
FOR EACH ROW EXECUTE FUNCTION site_summaries_site();
--> statement-breakpoint
CREATE TRIGGER site_summaries_monitor_insert AFTER INSERT ON uptime_monitors
FOR EACH ROW EXECUTE FUNCTION site_summaries_uptime_status();
--> statement-breakpoint
CREATE TRIGGER site_summaries_monitor_update AFTER UPDATE OF status ON uptime_monitors
FOR EACH ROW EXECUTE FUNCTION site_summaries_uptime_status();
--> statement-breakpoint
CREATE TRIGGER site_summaries_monitor_delete AFTER DELETE ON uptime_monitors
FOR EACH ROW EXECUTE FUNCTION site_summaries_uptime_status();
--> statement-breakpoint
CREATE TRIGGER site_summaries_hourly_insert AFTER INSERT ON uptime_hourly
FOR EACH ROW EXECUTE FUNCTION site_summaries_uptime_figures();
--> statement-breakpoint
CREATE TRIGGER site_summaries_hourly_update AFTER UPDATE ON uptime_hourly
FOR EACH ROW EXECUTE FUNCTION site_summaries_uptime_figures();
--> statement-breakpoint
CREATE TRIGGER site_summaries_daily_insert AFTER INSERT ON uptime_daily
FOR EACH ROW EXECUTE FUNCTION site_summaries_uptime_figures();
--> statement-breakpoint
CREATE TRIGGER site_summaries_daily_update AFTER UPDATE ON uptime_daily
FOR EACH ROW EXECUTE FUNCTION site_summaries_uptime_figures();
--> statement-breakpoint
CREATE TRIGGER site_summaries_audit_insert AFTER INSERT ON performance_audits
FOR EACH ROW WHEN (NEW.status = 'completed') EXECUTE FUNCTION site_summaries_score();
--> statement-breakpoint
CREATE TRIGGER site_summaries_audit_update AFTER UPDATE OF status, score_performance ON performance_audits
FOR EACH ROW WHEN (NEW.status = 'completed' OR OLD.status = 'completed') EXECUTE FUNCTION site_summaries_score();
--> statement-breakpoint
CREATE TRIGGER site_summaries_audit_delete AFTER DELETE ON performance_audits
FOR EACH ROW WHEN (OLD.status = 'completed') EXECUTE FUNCTION site_summaries_score();
--> statement-breakpoint
CREATE TRIGGER site_summaries_backup_insert AFTER INSERT ON backups
FOR EACH ROW EXECUTE FUNCTION site_summaries_backup();
--> statement-breakpoint
CREATE TRIGGER site_summaries_backup_update AFTER UPDATE OF status, created_at, finished_at ON backups
FOR EACH ROW EXECUTE FUNCTION site_summaries_backup();
--> statement-breakpoint
CREATE TRIGGER site_summaries_backup_delete AFTER DELETE ON backups
FOR EACH ROW EXECUTE FUNCTION site_summaries_backup();
--> statement-breakpoint
CREATE TRIGGER site_summaries_inventory_insert AFTER INSERT ON inventory_items
FOR EACH ROW WHEN (NEW.update_version IS NOT NULL) EXECUTE FUNCTION site_summaries_updates();
--> statement-breakpoint
CREATE TRIGGER site_summaries_inventory_update AFTER UPDATE OF update_version ON inventory_items
FOR EACH ROW WHEN ((OLD.update_version IS NULL) <> (NEW.update_version IS NULL)) EXECUTE FUNCTION site_summaries_updates();
--> statement-breakpoint
CREATE TRIGGER site_summaries_inventory_delete AFTER DELETE ON inventory_items
FOR EACH ROW WHEN (OLD.update_version IS NOT NULL) EXECUTE FUNCTION site_summaries_updates();
--> statement-breakpoint
-- Backfill, for a database that holds sites already: one row per site, then each fact as the triggers write it.
INSERT INTO site_summaries (site_id, sort_name, state, sync_failing, uptime_status)
  SELECT s.id, lower(coalesce(s.name, s.url)), s.state, s.sync_error IS NOT NULL, coalesce(m.status, 'unknown')
  FROM sites s LEFT JOIN uptime_monitors m ON m.site_id = s.id;
--> statement-breakpoint
UPDATE site_summaries x SET
    (uptime_24h, uptime_30d, response_ms) = (SELECT f.uptime_24h, f.uptime_30d, f.response_ms
      FROM site_uptime_figures f WHERE f.site_id = x.site_id),
    score = (SELECT v.score FROM site_summary_scores v WHERE v.site_id = x.site_id),
    (backup_status, backup_at) = (SELECT b.status, cast(extract(epoch FROM coalesce(b.finished_at, b.created_at)) * 1000 AS bigint)
      FROM backups b WHERE b.site_id = x.site_id ORDER BY b.id DESC LIMIT 1),
    updates = (SELECT count(*) FROM inventory_items i WHERE i.site_id = x.site_id AND i.update_version IS NOT NULL);
