CREATE TABLE `site_summaries` (
	`site_id` text PRIMARY KEY NOT NULL,
	`sort_name` text NOT NULL,
	`state` text NOT NULL,
	`sync_failing` integer DEFAULT false NOT NULL,
	`uptime_status` text DEFAULT 'unknown' NOT NULL,
	`uptime_24h` real,
	`uptime_30d` real,
	`response_ms` integer,
	`score` real,
	`updates` integer DEFAULT 0 NOT NULL,
	`backup_status` text,
	`backup_at` integer,
	`status` text GENERATED ALWAYS AS (case when state = 'pending' then 'pending' when uptime_status = 'down' then 'down' when uptime_status = 'up' and (sync_failing or score < 0.5) then 'degraded' else uptime_status end) VIRTUAL,
	`status_rank` integer GENERATED ALWAYS AS (case status when 'down' then 0 when 'degraded' then 1 when 'unknown' then 2 when 'pending' then 3 else 4 end) VIRTUAL,
	`backup_rank` integer GENERATED ALWAYS AS (case when backup_status = 'failed' then 0 when backup_status is null then 1 else 2 end) VIRTUAL,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `site_summaries_name_idx` ON `site_summaries` (`sort_name`,`site_id`);--> statement-breakpoint
CREATE INDEX `site_summaries_status_idx` ON `site_summaries` (`status`,`site_id`);--> statement-breakpoint
CREATE INDEX `site_summaries_status_rank_idx` ON `site_summaries` (`status_rank`,`site_id`);--> statement-breakpoint
CREATE INDEX `site_summaries_uptime_24h_idx` ON `site_summaries` (`uptime_24h`,`site_id`);--> statement-breakpoint
CREATE INDEX `site_summaries_uptime_30d_idx` ON `site_summaries` (`uptime_30d`,`site_id`);--> statement-breakpoint
CREATE INDEX `site_summaries_response_idx` ON `site_summaries` (`response_ms`,`site_id`);--> statement-breakpoint
CREATE INDEX `site_summaries_score_idx` ON `site_summaries` (`score`,`site_id`);--> statement-breakpoint
CREATE INDEX `site_summaries_updates_idx` ON `site_summaries` (`updates`,`site_id`);--> statement-breakpoint
CREATE INDEX `site_summaries_backup_rank_idx` ON `site_summaries` (`backup_rank`,`site_id`);--> statement-breakpoint
CREATE INDEX `site_summaries_backup_at_idx` ON `site_summaries` (`backup_at`,`site_id`);--> statement-breakpoint
-- The overview's summary rows follow the features' tables in the same transaction (src/dashboard/site-summaries.table.ts).
CREATE TRIGGER `site_summaries_site_insert` AFTER INSERT ON `sites` BEGIN
  INSERT INTO site_summaries (site_id, sort_name, state, sync_failing)
    VALUES (new.id, lower(coalesce(new.name, new.url)), new.state, new.sync_error IS NOT NULL)
    ON CONFLICT (site_id) DO UPDATE SET sort_name = excluded.sort_name, state = excluded.state, sync_failing = excluded.sync_failing;
END;
--> statement-breakpoint
CREATE TRIGGER `site_summaries_site_update` AFTER UPDATE OF `name`, `url`, `state`, `sync_error` ON `sites` BEGIN
  UPDATE site_summaries SET sort_name = lower(coalesce(new.name, new.url)), state = new.state,
    sync_failing = new.sync_error IS NOT NULL WHERE site_id = new.id;
END;
--> statement-breakpoint
CREATE TRIGGER `site_summaries_monitor_insert` AFTER INSERT ON `uptime_monitors` BEGIN
  UPDATE site_summaries SET uptime_status = new.status WHERE site_id = new.site_id;
END;
--> statement-breakpoint
CREATE TRIGGER `site_summaries_monitor_update` AFTER UPDATE OF `status` ON `uptime_monitors` BEGIN
  UPDATE site_summaries SET uptime_status = new.status WHERE site_id = new.site_id;
END;
--> statement-breakpoint
CREATE TRIGGER `site_summaries_monitor_delete` AFTER DELETE ON `uptime_monitors` BEGIN
  UPDATE site_summaries SET uptime_status = 'unknown' WHERE site_id = old.site_id;
END;
--> statement-breakpoint
CREATE TRIGGER `site_summaries_hourly_insert` AFTER INSERT ON `uptime_hourly` BEGIN
  UPDATE site_summaries SET
    uptime_24h = (SELECT CASE WHEN sum(h.up + h.down) > 0 THEN 1.0 * sum(h.up) / sum(h.up + h.down) END FROM uptime_hourly h
      WHERE h.site_id = new.site_id AND h.bucket > (SELECT max(n.bucket) FROM uptime_hourly n WHERE n.site_id = new.site_id) - 86400000),
    uptime_30d = (SELECT CASE WHEN sum(r.up + r.down) > 0 THEN 1.0 * sum(r.up) / sum(r.up + r.down) END FROM (
        SELECT d.up, d.down FROM uptime_daily d WHERE d.site_id = new.site_id
          AND d.bucket > (SELECT max(n.bucket) - max(n.bucket) % 86400000 FROM uptime_hourly n WHERE n.site_id = new.site_id) - 2592000000
        UNION ALL
        SELECT h.up, h.down FROM uptime_hourly h WHERE h.site_id = new.site_id
          AND h.bucket >= (SELECT max(n.bucket) - max(n.bucket) % 86400000 FROM uptime_hourly n WHERE n.site_id = new.site_id)) r),
    response_ms = (SELECT CASE WHEN h.response_count > 0 THEN h.response_sum / h.response_count END FROM uptime_hourly h
      WHERE h.site_id = new.site_id ORDER BY h.bucket DESC LIMIT 1)
  WHERE site_id = new.site_id;
END;
--> statement-breakpoint
CREATE TRIGGER `site_summaries_hourly_update` AFTER UPDATE ON `uptime_hourly` BEGIN
  UPDATE site_summaries SET
    uptime_24h = (SELECT CASE WHEN sum(h.up + h.down) > 0 THEN 1.0 * sum(h.up) / sum(h.up + h.down) END FROM uptime_hourly h
      WHERE h.site_id = new.site_id AND h.bucket > (SELECT max(n.bucket) FROM uptime_hourly n WHERE n.site_id = new.site_id) - 86400000),
    uptime_30d = (SELECT CASE WHEN sum(r.up + r.down) > 0 THEN 1.0 * sum(r.up) / sum(r.up + r.down) END FROM (
        SELECT d.up, d.down FROM uptime_daily d WHERE d.site_id = new.site_id
          AND d.bucket > (SELECT max(n.bucket) - max(n.bucket) % 86400000 FROM uptime_hourly n WHERE n.site_id = new.site_id) - 2592000000
        UNION ALL
        SELECT h.up, h.down FROM uptime_hourly h WHERE h.site_id = new.site_id
          AND h.bucket >= (SELECT max(n.bucket) - max(n.bucket) % 86400000 FROM uptime_hourly n WHERE n.site_id = new.site_id)) r),
    response_ms = (SELECT CASE WHEN h.response_count > 0 THEN h.response_sum / h.response_count END FROM uptime_hourly h
      WHERE h.site_id = new.site_id ORDER BY h.bucket DESC LIMIT 1)
  WHERE site_id = new.site_id;
END;
--> statement-breakpoint
CREATE TRIGGER `site_summaries_daily_insert` AFTER INSERT ON `uptime_daily` BEGIN
  UPDATE site_summaries SET
    uptime_24h = (SELECT CASE WHEN sum(h.up + h.down) > 0 THEN 1.0 * sum(h.up) / sum(h.up + h.down) END FROM uptime_hourly h
      WHERE h.site_id = new.site_id AND h.bucket > (SELECT max(n.bucket) FROM uptime_hourly n WHERE n.site_id = new.site_id) - 86400000),
    uptime_30d = (SELECT CASE WHEN sum(r.up + r.down) > 0 THEN 1.0 * sum(r.up) / sum(r.up + r.down) END FROM (
        SELECT d.up, d.down FROM uptime_daily d WHERE d.site_id = new.site_id
          AND d.bucket > (SELECT max(n.bucket) - max(n.bucket) % 86400000 FROM uptime_hourly n WHERE n.site_id = new.site_id) - 2592000000
        UNION ALL
        SELECT h.up, h.down FROM uptime_hourly h WHERE h.site_id = new.site_id
          AND h.bucket >= (SELECT max(n.bucket) - max(n.bucket) % 86400000 FROM uptime_hourly n WHERE n.site_id = new.site_id)) r),
    response_ms = (SELECT CASE WHEN h.response_count > 0 THEN h.response_sum / h.response_count END FROM uptime_hourly h
      WHERE h.site_id = new.site_id ORDER BY h.bucket DESC LIMIT 1)
  WHERE site_id = new.site_id;
END;
--> statement-breakpoint
CREATE TRIGGER `site_summaries_daily_update` AFTER UPDATE ON `uptime_daily` BEGIN
  UPDATE site_summaries SET
    uptime_24h = (SELECT CASE WHEN sum(h.up + h.down) > 0 THEN 1.0 * sum(h.up) / sum(h.up + h.down) END FROM uptime_hourly h
      WHERE h.site_id = new.site_id AND h.bucket > (SELECT max(n.bucket) FROM uptime_hourly n WHERE n.site_id = new.site_id) - 86400000),
    uptime_30d = (SELECT CASE WHEN sum(r.up + r.down) > 0 THEN 1.0 * sum(r.up) / sum(r.up + r.down) END FROM (
        SELECT d.up, d.down FROM uptime_daily d WHERE d.site_id = new.site_id
          AND d.bucket > (SELECT max(n.bucket) - max(n.bucket) % 86400000 FROM uptime_hourly n WHERE n.site_id = new.site_id) - 2592000000
        UNION ALL
        SELECT h.up, h.down FROM uptime_hourly h WHERE h.site_id = new.site_id
          AND h.bucket >= (SELECT max(n.bucket) - max(n.bucket) % 86400000 FROM uptime_hourly n WHERE n.site_id = new.site_id)) r),
    response_ms = (SELECT CASE WHEN h.response_count > 0 THEN h.response_sum / h.response_count END FROM uptime_hourly h
      WHERE h.site_id = new.site_id ORDER BY h.bucket DESC LIMIT 1)
  WHERE site_id = new.site_id;
END;
--> statement-breakpoint
CREATE TRIGGER `site_summaries_audit_insert` AFTER INSERT ON `performance_audits` WHEN new.status = 'completed' BEGIN
  UPDATE site_summaries SET score = (SELECT a.score_performance FROM performance_audits a
      WHERE a.site_id = new.site_id AND a.status = 'completed' ORDER BY a.id DESC LIMIT 1)
  WHERE site_id = new.site_id;
END;
--> statement-breakpoint
CREATE TRIGGER `site_summaries_audit_update` AFTER UPDATE OF `status`, `score_performance` ON `performance_audits` WHEN new.status = 'completed' OR old.status = 'completed' BEGIN
  UPDATE site_summaries SET score = (SELECT a.score_performance FROM performance_audits a
      WHERE a.site_id = new.site_id AND a.status = 'completed' ORDER BY a.id DESC LIMIT 1)
  WHERE site_id = new.site_id;
END;
--> statement-breakpoint
CREATE TRIGGER `site_summaries_audit_delete` AFTER DELETE ON `performance_audits` WHEN old.status = 'completed' BEGIN
  UPDATE site_summaries SET score = (SELECT a.score_performance FROM performance_audits a
      WHERE a.site_id = old.site_id AND a.status = 'completed' ORDER BY a.id DESC LIMIT 1)
  WHERE site_id = old.site_id;
END;
--> statement-breakpoint
CREATE TRIGGER `site_summaries_backup_insert` AFTER INSERT ON `backups` BEGIN
  UPDATE site_summaries SET (backup_status, backup_at) = (SELECT b.status, coalesce(b.finished_at, b.created_at)
      FROM backups b WHERE b.site_id = new.site_id ORDER BY b.id DESC LIMIT 1)
  WHERE site_id = new.site_id;
END;
--> statement-breakpoint
CREATE TRIGGER `site_summaries_backup_update` AFTER UPDATE OF `status`, `created_at`, `finished_at` ON `backups` BEGIN
  UPDATE site_summaries SET (backup_status, backup_at) = (SELECT b.status, coalesce(b.finished_at, b.created_at)
      FROM backups b WHERE b.site_id = new.site_id ORDER BY b.id DESC LIMIT 1)
  WHERE site_id = new.site_id;
END;
--> statement-breakpoint
CREATE TRIGGER `site_summaries_backup_delete` AFTER DELETE ON `backups` BEGIN
  UPDATE site_summaries SET (backup_status, backup_at) = (SELECT b.status, coalesce(b.finished_at, b.created_at)
      FROM backups b WHERE b.site_id = old.site_id ORDER BY b.id DESC LIMIT 1)
  WHERE site_id = old.site_id;
END;
--> statement-breakpoint
CREATE TRIGGER `site_summaries_inventory_insert` AFTER INSERT ON `inventory_items` WHEN new.update_version IS NOT NULL BEGIN
  UPDATE site_summaries SET updates = (SELECT count(*) FROM inventory_items i
      WHERE i.site_id = new.site_id AND i.update_version IS NOT NULL)
  WHERE site_id = new.site_id;
END;
--> statement-breakpoint
CREATE TRIGGER `site_summaries_inventory_update` AFTER UPDATE OF `update_version` ON `inventory_items` WHEN old.update_version IS NOT new.update_version BEGIN
  UPDATE site_summaries SET updates = (SELECT count(*) FROM inventory_items i
      WHERE i.site_id = new.site_id AND i.update_version IS NOT NULL)
  WHERE site_id = new.site_id;
END;
--> statement-breakpoint
CREATE TRIGGER `site_summaries_inventory_delete` AFTER DELETE ON `inventory_items` WHEN old.update_version IS NOT NULL BEGIN
  UPDATE site_summaries SET updates = (SELECT count(*) FROM inventory_items i
      WHERE i.site_id = old.site_id AND i.update_version IS NOT NULL)
  WHERE site_id = old.site_id;
END;
--> statement-breakpoint
-- Backfill: one row per existing site, then each fact.
INSERT INTO site_summaries (site_id, sort_name, state, sync_failing, uptime_status)
  SELECT s.id, lower(coalesce(s.name, s.url)), s.state, s.sync_error IS NOT NULL, coalesce(m.status, 'unknown')
  FROM sites s LEFT JOIN uptime_monitors m ON m.site_id = s.id;
--> statement-breakpoint
UPDATE site_summaries SET
    uptime_24h = (SELECT CASE WHEN sum(h.up + h.down) > 0 THEN 1.0 * sum(h.up) / sum(h.up + h.down) END FROM uptime_hourly h
      WHERE h.site_id = site_summaries.site_id AND h.bucket > (SELECT max(n.bucket) FROM uptime_hourly n WHERE n.site_id = site_summaries.site_id) - 86400000),
    uptime_30d = (SELECT CASE WHEN sum(r.up + r.down) > 0 THEN 1.0 * sum(r.up) / sum(r.up + r.down) END FROM (
        SELECT d.up, d.down FROM uptime_daily d WHERE d.site_id = site_summaries.site_id
          AND d.bucket > (SELECT max(n.bucket) - max(n.bucket) % 86400000 FROM uptime_hourly n WHERE n.site_id = site_summaries.site_id) - 2592000000
        UNION ALL
        SELECT h.up, h.down FROM uptime_hourly h WHERE h.site_id = site_summaries.site_id
          AND h.bucket >= (SELECT max(n.bucket) - max(n.bucket) % 86400000 FROM uptime_hourly n WHERE n.site_id = site_summaries.site_id)) r),
    response_ms = (SELECT CASE WHEN h.response_count > 0 THEN h.response_sum / h.response_count END FROM uptime_hourly h
      WHERE h.site_id = site_summaries.site_id ORDER BY h.bucket DESC LIMIT 1)
  WHERE site_id = site_summaries.site_id;
--> statement-breakpoint
UPDATE site_summaries SET score = (SELECT a.score_performance FROM performance_audits a
      WHERE a.site_id = site_summaries.site_id AND a.status = 'completed' ORDER BY a.id DESC LIMIT 1)
  WHERE site_id = site_summaries.site_id;
--> statement-breakpoint
UPDATE site_summaries SET (backup_status, backup_at) = (SELECT b.status, coalesce(b.finished_at, b.created_at)
      FROM backups b WHERE b.site_id = site_summaries.site_id ORDER BY b.id DESC LIMIT 1)
  WHERE site_id = site_summaries.site_id;
--> statement-breakpoint
UPDATE site_summaries SET updates = (SELECT count(*) FROM inventory_items i
      WHERE i.site_id = site_summaries.site_id AND i.update_version IS NOT NULL)
  WHERE site_id = site_summaries.site_id;
