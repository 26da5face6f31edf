CREATE TABLE `update_history` (
	`id` text PRIMARY KEY NOT NULL,
	`site_id` text NOT NULL,
	`type` text NOT NULL,
	`slug` text,
	`from_version` text,
	`to_version` text,
	`started_at` integer NOT NULL,
	`finished_at` integer,
	`trigger_kind` text NOT NULL,
	`trigger_id` text,
	`job_id` text,
	`result` text NOT NULL,
	`reason` text,
	`error` text,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `update_history_site_idx` ON `update_history` (`site_id`,`id`);--> statement-breakpoint
CREATE INDEX `update_history_job_idx` ON `update_history` (`job_id`);