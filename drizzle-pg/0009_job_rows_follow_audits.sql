-- A job row goes with the feature row that shares its id (issue 34, docs/design/cluster-state.md "Triggers on
-- PostgreSQL"), as SQLite's `*_job_delete` triggers take it (src/jobs/jobs.triggers.ts): an audit deleted by
-- its site's removal (the cascade) takes its job row. One statement-level trigger per feature table, its
-- deleted rows a transition table, so a retention sweep of thousands deletes their job rows in one statement.
CREATE FUNCTION job_rows_follow_feature() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM jobs WHERE id IN (SELECT id FROM gone);
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER performance_audits_job_delete AFTER DELETE ON performance_audits
REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION job_rows_follow_feature();
