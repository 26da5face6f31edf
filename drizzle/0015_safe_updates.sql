CREATE TABLE `rollback_secrets` (
	`site_id` text PRIMARY KEY NOT NULL,
	`secret_sealed` text NOT NULL,
	`provisioned_at` integer NOT NULL,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `safe_updates` (
	`id` text PRIMARY KEY NOT NULL,
	`site_id` text NOT NULL,
	`item_type` text NOT NULL,
	`slug` text NOT NULL,
	`status` text NOT NULL,
	`phase` text NOT NULL,
	`reason` text,
	`message` text,
	`policy` text NOT NULL,
	`from_version` text,
	`to_version` text,
	`restore_point_id` text,
	`restore_point_target` text,
	`backup_id` text,
	`report` text DEFAULT '{}' NOT NULL,
	`created_at` integer NOT NULL,
	`started_at` integer,
	`finished_at` integer,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `safe_updates_site_idx` ON `safe_updates` (`site_id`,`created_at`);--> statement-breakpoint
CREATE TRIGGER `safe_updates_job_insert` AFTER INSERT ON `safe_updates` BEGIN
	INSERT INTO `jobs` (`id`, `kind`, `site_id`, `state`, `reason`, `message`, `progress`, `params`, `attempts`, `created_at`, `started_at`, `finished_at`) VALUES (new.id, 'safe-update', new.site_id, CASE new.status WHEN 'kept' THEN 'succeeded' WHEN 'queued' THEN 'queued' WHEN 'running' THEN 'running' ELSE CASE WHEN new.reason = 'cancelled' THEN 'cancelled' ELSE 'failed' END END, CASE WHEN new.status IN ('rolled-back', 'rollback-failed') THEN new.status ELSE new.reason END, new.message, json_object('phase', new.phase), json_object('type', new.item_type, 'slug', new.slug), CASE WHEN new.started_at IS NULL THEN 0 ELSE 1 END, new.created_at, new.started_at, new.finished_at);
END;--> statement-breakpoint
CREATE TRIGGER `safe_updates_job_update` AFTER UPDATE ON `safe_updates` BEGIN
	UPDATE `jobs` SET `state` = CASE new.status WHEN 'kept' THEN 'succeeded' WHEN 'queued' THEN 'queued' WHEN 'running' THEN 'running' ELSE CASE WHEN new.reason = 'cancelled' THEN 'cancelled' ELSE 'failed' END END, `reason` = CASE WHEN new.status IN ('rolled-back', 'rollback-failed') THEN new.status ELSE new.reason END, `message` = new.message, `progress` = json_object('phase', new.phase), `attempts` = `attempts` + (new.status = 'running' AND old.status <> 'running'), `started_at` = new.started_at, `finished_at` = new.finished_at
	WHERE `id` = new.id AND `state` <> 'cancelled';
END;--> statement-breakpoint
CREATE TRIGGER `safe_updates_job_delete` AFTER DELETE ON `safe_updates` BEGIN
	DELETE FROM `jobs` WHERE `id` = old.id;
END;
