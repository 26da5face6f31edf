CREATE TABLE `backups` (
	`id` text PRIMARY KEY NOT NULL,
	`site_id` text NOT NULL,
	`kind` text NOT NULL,
	`status` text NOT NULL,
	`reason` text,
	`error` text,
	`manifest_hash` text,
	`files` integer DEFAULT 0 NOT NULL,
	`files_done` integer DEFAULT 0 NOT NULL,
	`tables` integer DEFAULT 0 NOT NULL,
	`tables_done` integer DEFAULT 0 NOT NULL,
	`rows` integer DEFAULT 0 NOT NULL,
	`bytes_total` integer DEFAULT 0 NOT NULL,
	`bytes_transferred` integer DEFAULT 0 NOT NULL,
	`bytes_stored` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`started_at` integer,
	`finished_at` integer,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `backups_site_idx` ON `backups` (`site_id`,`id`);--> statement-breakpoint
CREATE INDEX `backups_status_idx` ON `backups` (`status`);--> statement-breakpoint
CREATE TABLE `restores` (
	`id` text PRIMARY KEY NOT NULL,
	`site_id` text NOT NULL,
	`backup_id` text NOT NULL,
	`pre_restore_backup_id` text,
	`status` text NOT NULL,
	`reason` text,
	`error` text,
	`files_restored` integer DEFAULT 0 NOT NULL,
	`files_deleted` integer DEFAULT 0 NOT NULL,
	`tables_restored` integer DEFAULT 0 NOT NULL,
	`bytes_transferred` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`started_at` integer,
	`finished_at` integer,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `restores_site_idx` ON `restores` (`site_id`,`id`);--> statement-breakpoint
CREATE INDEX `restores_status_idx` ON `restores` (`status`);