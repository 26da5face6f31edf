-- The overview's uptime figures (24 h, 30 d, response time) written once, in a view, instead of a copy of
-- the same subqueries in each of the four triggers on the hourly and daily roll-ups (issue 35). The view's
-- expressions are 0016's, word for word, with the summary row's site in place of the written row's, so the
-- figures are the same; the triggers and the view are declared in src/dashboard/site-summaries.triggers.ts.
DROP TRIGGER IF EXISTS `site_summaries_hourly_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `site_summaries_hourly_update`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `site_summaries_daily_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `site_summaries_daily_update`;
--> statement-breakpoint
CREATE VIEW `site_uptime_figures` AS
  SELECT s.site_id,
    (SELECT CASE WHEN sum(h.up + h.down) > 0 THEN 1.0 * sum(h.up) / sum(h.up + h.down) END FROM uptime_hourly h
      WHERE h.site_id = s.site_id AND h.bucket > (SELECT max(n.bucket) FROM uptime_hourly n WHERE n.site_id = s.site_id) - 86400000) AS uptime_24h,
    (SELECT CASE WHEN sum(r.up + r.down) > 0 THEN 1.0 * sum(r.up) / sum(r.up + r.down) END FROM (
        SELECT d.up, d.down FROM uptime_daily d WHERE d.site_id = s.site_id
          AND d.bucket > (SELECT max(n.bucket) - max(n.bucket) % 86400000 FROM uptime_hourly n WHERE n.site_id = s.site_id) - 2592000000
        UNION ALL
        SELECT h.up, h.down FROM uptime_hourly h WHERE h.site_id = s.site_id
          AND h.bucket >= (SELECT max(n.bucket) - max(n.bucket) % 86400000 FROM uptime_hourly n WHERE n.site_id = s.site_id)) r) AS uptime_30d,
    (SELECT CASE WHEN h.response_count > 0 THEN h.response_sum / h.response_count END FROM uptime_hourly h
      WHERE h.site_id = s.site_id ORDER BY h.bucket DESC LIMIT 1) AS response_ms
  FROM site_summaries s;
--> statement-breakpoint
CREATE TRIGGER `site_summaries_hourly_insert` AFTER INSERT ON `uptime_hourly` BEGIN
  UPDATE site_summaries SET (uptime_24h, uptime_30d, response_ms) = (SELECT f.uptime_24h, f.uptime_30d, f.response_ms
      FROM site_uptime_figures f WHERE f.site_id = new.site_id)
  WHERE site_id = new.site_id;
END;
--> statement-breakpoint
CREATE TRIGGER `site_summaries_hourly_update` AFTER UPDATE ON `uptime_hourly` BEGIN
  UPDATE site_summaries SET (uptime_24h, uptime_30d, response_ms) = (SELECT f.uptime_24h, f.uptime_30d, f.response_ms
      FROM site_uptime_figures f WHERE f.site_id = new.site_id)
  WHERE site_id = new.site_id;
END;
--> statement-breakpoint
CREATE TRIGGER `site_summaries_daily_insert` AFTER INSERT ON `uptime_daily` BEGIN
  UPDATE site_summaries SET (uptime_24h, uptime_30d, response_ms) = (SELECT f.uptime_24h, f.uptime_30d, f.response_ms
      FROM site_uptime_figures f WHERE f.site_id = new.site_id)
  WHERE site_id = new.site_id;
END;
--> statement-breakpoint
CREATE TRIGGER `site_summaries_daily_update` AFTER UPDATE ON `uptime_daily` BEGIN
  UPDATE site_summaries SET (uptime_24h, uptime_30d, response_ms) = (SELECT f.uptime_24h, f.uptime_30d, f.response_ms
      FROM site_uptime_figures f WHERE f.site_id = new.site_id)
  WHERE site_id = new.site_id;
END;
