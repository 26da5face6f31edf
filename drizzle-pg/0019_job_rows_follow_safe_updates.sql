-- A safe update's job row goes with it (issue 34; job_rows_follow_feature, drizzle-pg/0009), as SQLite's
-- safe_updates_job_delete takes it (src/jobs/jobs.triggers.ts): a site's removal takes its safe updates by cascade,
-- and their job rows in the same statement.
CREATE TRIGGER safe_updates_job_delete AFTER DELETE ON safe_updates
REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION job_rows_follow_feature();
