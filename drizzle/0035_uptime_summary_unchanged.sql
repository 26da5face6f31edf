-- A probe's hourly roll-up write no longer rewrites the overview's summary row when none of its uptime figures can
-- change (docs/benchmarks.md, Uptime: 0016's trigger cost every probe a recomputation and a summary write, 1.4 KB
-- written a probe against 0.65 KB before it). The figures are exact all the same: an UPDATE of an hourly row that
-- moves no `down` count, no bucket and no integer response average, on a site whose 24 h and 30 d figures are both
-- exactly 1 (all up), leaves them 1 and the response time as it was (the view reads the newest bucket's average).
-- Every other write recomputes as before. Declared in src/dashboard/site-summaries.triggers.ts.
DROP TRIGGER IF EXISTS `site_summaries_hourly_update`;
--> statement-breakpoint
CREATE TRIGGER `site_summaries_hourly_update` AFTER UPDATE ON `uptime_hourly`
WHEN new.site_id IS NOT old.site_id OR new.bucket IS NOT old.bucket OR new.down IS NOT old.down
  OR new.response_sum / nullif(new.response_count, 0) IS NOT old.response_sum / nullif(old.response_count, 0)
  OR NOT EXISTS (SELECT 1 FROM site_summaries s WHERE s.site_id = new.site_id AND s.uptime_24h = 1 AND s.uptime_30d = 1)
BEGIN
  UPDATE site_summaries SET (uptime_24h, uptime_30d, response_ms) = (SELECT f.uptime_24h, f.uptime_30d, f.response_ms
      FROM site_uptime_figures f WHERE f.site_id = new.site_id)
  WHERE site_id = new.site_id;
END;
