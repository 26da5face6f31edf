-- The overview's score is one form factor's: mobile (Lighthouse's default) when the site has a
-- completed mobile audit, else desktop. It used to be the newest audit's, so a site audited both
-- ways flipped between its mobile and desktop score, and in and out of `degraded`.
DROP TRIGGER IF EXISTS `site_summaries_audit_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `site_summaries_audit_update`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `site_summaries_audit_delete`;
--> statement-breakpoint
CREATE VIEW `site_summary_scores` AS
  SELECT s.site_id, coalesce(
    (SELECT a.score_performance FROM performance_audits a
      WHERE a.site_id = s.site_id AND a.form_factor = 'mobile' AND a.status = 'completed' ORDER BY a.id DESC LIMIT 1),
    (SELECT a.score_performance FROM performance_audits a
      WHERE a.site_id = s.site_id AND a.form_factor = 'desktop' AND a.status = 'completed' ORDER BY a.id DESC LIMIT 1)
  ) AS score
  FROM site_summaries s;
--> statement-breakpoint
CREATE TRIGGER `site_summaries_audit_insert` AFTER INSERT ON `performance_audits` WHEN new.status = 'completed' BEGIN
  UPDATE site_summaries SET score = (SELECT v.score FROM site_summary_scores v WHERE v.site_id = new.site_id)
  WHERE site_id = new.site_id;
END;
--> statement-breakpoint
CREATE TRIGGER `site_summaries_audit_update` AFTER UPDATE OF `status`, `score_performance` ON `performance_audits` WHEN new.status = 'completed' OR old.status = 'completed' BEGIN
  UPDATE site_summaries SET score = (SELECT v.score FROM site_summary_scores v WHERE v.site_id = new.site_id)
  WHERE site_id = new.site_id;
END;
--> statement-breakpoint
CREATE TRIGGER `site_summaries_audit_delete` AFTER DELETE ON `performance_audits` WHEN old.status = 'completed' BEGIN
  UPDATE site_summaries SET score = (SELECT v.score FROM site_summary_scores v WHERE v.site_id = old.site_id)
  WHERE site_id = old.site_id;
END;
--> statement-breakpoint
UPDATE site_summaries SET score = (SELECT v.score FROM site_summary_scores v WHERE v.site_id = site_summaries.site_id);
