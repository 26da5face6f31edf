-- A backup's or restore's job row goes with it (issue 34; job_rows_follow_feature, drizzle-pg/0009), as SQLite's
-- backups_job_delete and restores_job_delete take it (src/jobs/jobs.triggers.ts): retention's delete of ended
-- backups, and a site's removal by cascade, take their job rows in one statement.
CREATE TRIGGER backups_job_delete AFTER DELETE ON backups
REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION job_rows_follow_feature();
--> statement-breakpoint
CREATE TRIGGER restores_job_delete AFTER DELETE ON restores
REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION job_rows_follow_feature();
