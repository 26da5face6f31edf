CREATE TABLE `performance_audits` (
	`id` text PRIMARY KEY NOT NULL,
	`site_id` text NOT NULL,
	`url` text NOT NULL,
	`form_factor` text NOT NULL,
	`trigger` text NOT NULL,
	`runs` integer NOT NULL,
	`status` text NOT NULL,
	`queued_at` integer NOT NULL,
	`started_at` integer,
	`finished_at` integer,
	`lighthouse_version` text,
	`chrome_version` text,
	`score_performance` real,
	`score_accessibility` real,
	`score_best_practices` real,
	`score_seo` real,
	`fcp_ms` real,
	`lcp_ms` real,
	`tbt_ms` real,
	`cls` real,
	`speed_index_ms` real,
	`ttfb_ms` real,
	`failure_reason` text,
	`failure_message` text,
	`report_bytes` integer,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `performance_audits_site_idx` ON `performance_audits` (`site_id`,`form_factor`,`id`);--> statement-breakpoint
CREATE INDEX `performance_audits_status_idx` ON `performance_audits` (`status`);--> statement-breakpoint
CREATE TABLE `performance_settings` (
	`site_id` text PRIMARY KEY NOT NULL,
	`enabled` integer NOT NULL,
	`form_factors` text NOT NULL,
	`runs` integer NOT NULL,
	`last_scheduled_at` integer,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
