-- The job runner writes safe updates' job rows from now on (docs/jobs.md, "Who writes a job row"): the triggers of 0015
-- that mirrored `safe_updates` into `jobs` go, and with them the last job row any trigger writes. The delete trigger
-- stays, as 0033 kept the backups' ones: the safe updates of a removed site (cascade) take their job rows with them.
-- No row needs mending: the runner writes the values the triggers did, and a safe update left queued or running is
-- queued again at the next start, as before.
DROP TRIGGER IF EXISTS `safe_updates_job_insert`;--> statement-breakpoint
DROP TRIGGER IF EXISTS `safe_updates_job_update`;
