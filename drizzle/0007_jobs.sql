CREATE TABLE `jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`site_id` text,
	`state` text NOT NULL,
	`reason` text,
	`message` text,
	`progress` text DEFAULT '{}' NOT NULL,
	`params` text DEFAULT '{}' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`started_at` integer,
	`finished_at` integer
);
--> statement-breakpoint
CREATE INDEX `jobs_created_idx` ON `jobs` (`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `jobs_site_idx` ON `jobs` (`site_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `jobs_state_idx` ON `jobs` (`state`,`kind`);--> statement-breakpoint
-- Every backup, restore and audit so far gets its job row (history in /api/jobs, recovery after an upgrade);
-- from now on triggers write a feature row's job row in the same statement, so the two cannot disagree.
-- A cancelled job stays cancelled whatever its feature row says later.
INSERT INTO `jobs` (`id`, `kind`, `site_id`, `state`, `reason`, `message`, `progress`, `params`, `attempts`, `created_at`, `started_at`, `finished_at`) SELECT backups.id, 'backup', backups.site_id, CASE backups.status WHEN 'completed' THEN 'succeeded' WHEN 'failed' THEN CASE WHEN backups.reason = 'cancelled' THEN 'cancelled' ELSE 'failed' END ELSE backups.status END, backups.reason, backups.error, json_object('files', backups.files, 'filesDone', backups.files_done, 'tables', backups.tables, 'tablesDone', backups.tables_done, 'rows', backups.rows, 'bytesTotal', backups.bytes_total, 'bytesTransferred', backups.bytes_transferred, 'bytesStored', backups.bytes_stored), json_object('kind', backups.kind, 'retryOf', backups.retry_of), CASE WHEN backups.started_at IS NULL THEN 0 ELSE 1 END, backups.created_at, backups.started_at, backups.finished_at FROM `backups`;--> statement-breakpoint
CREATE TRIGGER `backups_job_insert` AFTER INSERT ON `backups` BEGIN
	INSERT INTO `jobs` (`id`, `kind`, `site_id`, `state`, `reason`, `message`, `progress`, `params`, `attempts`, `created_at`, `started_at`, `finished_at`) VALUES (new.id, 'backup', new.site_id, CASE new.status WHEN 'completed' THEN 'succeeded' WHEN 'failed' THEN CASE WHEN new.reason = 'cancelled' THEN 'cancelled' ELSE 'failed' END ELSE new.status END, new.reason, new.error, json_object('files', new.files, 'filesDone', new.files_done, 'tables', new.tables, 'tablesDone', new.tables_done, 'rows', new.rows, 'bytesTotal', new.bytes_total, 'bytesTransferred', new.bytes_transferred, 'bytesStored', new.bytes_stored), json_object('kind', new.kind, 'retryOf', new.retry_of), CASE WHEN new.started_at IS NULL THEN 0 ELSE 1 END, new.created_at, new.started_at, new.finished_at);
END;--> statement-breakpoint
CREATE TRIGGER `backups_job_update` AFTER UPDATE ON `backups` BEGIN
	UPDATE `jobs` SET `state` = CASE new.status WHEN 'completed' THEN 'succeeded' WHEN 'failed' THEN CASE WHEN new.reason = 'cancelled' THEN 'cancelled' ELSE 'failed' END ELSE new.status END, `reason` = new.reason, `message` = new.error, `progress` = json_object('files', new.files, 'filesDone', new.files_done, 'tables', new.tables, 'tablesDone', new.tables_done, 'rows', new.rows, 'bytesTotal', new.bytes_total, 'bytesTransferred', new.bytes_transferred, 'bytesStored', new.bytes_stored), `params` = json_object('kind', new.kind, 'retryOf', new.retry_of), `attempts` = `attempts` + (new.status = 'running' AND old.status <> 'running'), `started_at` = new.started_at, `finished_at` = new.finished_at
	WHERE `id` = new.id AND `state` <> 'cancelled';
END;--> statement-breakpoint
CREATE TRIGGER `backups_job_delete` AFTER DELETE ON `backups` BEGIN
	DELETE FROM `jobs` WHERE `id` = old.id;
END;--> statement-breakpoint
INSERT INTO `jobs` (`id`, `kind`, `site_id`, `state`, `reason`, `message`, `progress`, `params`, `attempts`, `created_at`, `started_at`, `finished_at`) SELECT restores.id, 'restore', restores.site_id, CASE restores.status WHEN 'completed' THEN 'succeeded' WHEN 'failed' THEN CASE WHEN restores.reason = 'cancelled' THEN 'cancelled' ELSE 'failed' END ELSE restores.status END, restores.reason, restores.error, json_object('filesRestored', restores.files_restored, 'filesDeleted', restores.files_deleted, 'tablesRestored', restores.tables_restored, 'bytesTransferred', restores.bytes_transferred), json_object('backupId', restores.backup_id, 'preRestoreBackupId', restores.pre_restore_backup_id), CASE WHEN restores.started_at IS NULL THEN 0 ELSE 1 END, restores.created_at, restores.started_at, restores.finished_at FROM `restores`;--> statement-breakpoint
CREATE TRIGGER `restores_job_insert` AFTER INSERT ON `restores` BEGIN
	INSERT INTO `jobs` (`id`, `kind`, `site_id`, `state`, `reason`, `message`, `progress`, `params`, `attempts`, `created_at`, `started_at`, `finished_at`) VALUES (new.id, 'restore', new.site_id, CASE new.status WHEN 'completed' THEN 'succeeded' WHEN 'failed' THEN CASE WHEN new.reason = 'cancelled' THEN 'cancelled' ELSE 'failed' END ELSE new.status END, new.reason, new.error, json_object('filesRestored', new.files_restored, 'filesDeleted', new.files_deleted, 'tablesRestored', new.tables_restored, 'bytesTransferred', new.bytes_transferred), json_object('backupId', new.backup_id, 'preRestoreBackupId', new.pre_restore_backup_id), CASE WHEN new.started_at IS NULL THEN 0 ELSE 1 END, new.created_at, new.started_at, new.finished_at);
END;--> statement-breakpoint
CREATE TRIGGER `restores_job_update` AFTER UPDATE ON `restores` BEGIN
	UPDATE `jobs` SET `state` = CASE new.status WHEN 'completed' THEN 'succeeded' WHEN 'failed' THEN CASE WHEN new.reason = 'cancelled' THEN 'cancelled' ELSE 'failed' END ELSE new.status END, `reason` = new.reason, `message` = new.error, `progress` = json_object('filesRestored', new.files_restored, 'filesDeleted', new.files_deleted, 'tablesRestored', new.tables_restored, 'bytesTransferred', new.bytes_transferred), `params` = json_object('backupId', new.backup_id, 'preRestoreBackupId', new.pre_restore_backup_id), `attempts` = `attempts` + (new.status = 'running' AND old.status <> 'running'), `started_at` = new.started_at, `finished_at` = new.finished_at
	WHERE `id` = new.id AND `state` <> 'cancelled';
END;--> statement-breakpoint
CREATE TRIGGER `restores_job_delete` AFTER DELETE ON `restores` BEGIN
	DELETE FROM `jobs` WHERE `id` = old.id;
END;--> statement-breakpoint
INSERT INTO `jobs` (`id`, `kind`, `site_id`, `state`, `reason`, `message`, `progress`, `params`, `attempts`, `created_at`, `started_at`, `finished_at`) SELECT performance_audits.id, 'audit', performance_audits.site_id, CASE performance_audits.status WHEN 'completed' THEN 'succeeded' ELSE performance_audits.status END, performance_audits.failure_reason, performance_audits.failure_message, json_object(), json_object('url', performance_audits.url, 'formFactor', performance_audits.form_factor, 'trigger', performance_audits.trigger, 'runs', performance_audits.runs), CASE WHEN performance_audits.started_at IS NULL THEN 0 ELSE 1 END, performance_audits.queued_at, performance_audits.started_at, performance_audits.finished_at FROM `performance_audits`;--> statement-breakpoint
CREATE TRIGGER `performance_audits_job_insert` AFTER INSERT ON `performance_audits` BEGIN
	INSERT INTO `jobs` (`id`, `kind`, `site_id`, `state`, `reason`, `message`, `progress`, `params`, `attempts`, `created_at`, `started_at`, `finished_at`) VALUES (new.id, 'audit', new.site_id, CASE new.status WHEN 'completed' THEN 'succeeded' ELSE new.status END, new.failure_reason, new.failure_message, json_object(), json_object('url', new.url, 'formFactor', new.form_factor, 'trigger', new.trigger, 'runs', new.runs), CASE WHEN new.started_at IS NULL THEN 0 ELSE 1 END, new.queued_at, new.started_at, new.finished_at);
END;--> statement-breakpoint
CREATE TRIGGER `performance_audits_job_update` AFTER UPDATE OF status, started_at, finished_at, failure_reason, failure_message ON `performance_audits` BEGIN
	UPDATE `jobs` SET `state` = CASE new.status WHEN 'completed' THEN 'succeeded' ELSE new.status END, `reason` = new.failure_reason, `message` = new.failure_message, `progress` = json_object(), `params` = json_object('url', new.url, 'formFactor', new.form_factor, 'trigger', new.trigger, 'runs', new.runs), `attempts` = `attempts` + (new.status = 'running' AND old.status <> 'running'), `started_at` = new.started_at, `finished_at` = new.finished_at
	WHERE `id` = new.id AND `state` <> 'cancelled';
END;--> statement-breakpoint
CREATE TRIGGER `performance_audits_job_delete` AFTER DELETE ON `performance_audits` BEGIN
	DELETE FROM `jobs` WHERE `id` = old.id;
END;
