CREATE TABLE `downtime_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`site_id` text NOT NULL,
	`started_at` integer NOT NULL,
	`ended_at` integer,
	`cause` text NOT NULL,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `downtime_events_site_idx` ON `downtime_events` (`site_id`,`started_at`);--> statement-breakpoint
CREATE TABLE `uptime_daily` (
	`site_id` text NOT NULL,
	`bucket` integer NOT NULL,
	`up` integer NOT NULL,
	`down` integer NOT NULL,
	`response_sum` integer NOT NULL,
	`response_count` integer NOT NULL,
	`response_min` integer,
	`response_max` integer,
	PRIMARY KEY(`site_id`, `bucket`),
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `uptime_hourly` (
	`site_id` text NOT NULL,
	`bucket` integer NOT NULL,
	`up` integer NOT NULL,
	`down` integer NOT NULL,
	`response_sum` integer NOT NULL,
	`response_count` integer NOT NULL,
	`response_min` integer,
	`response_max` integer,
	PRIMARY KEY(`site_id`, `bucket`),
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `uptime_monitors` (
	`site_id` text PRIMARY KEY NOT NULL,
	`interval_seconds` integer,
	`timeout_ms` integer,
	`expected_status_json` text,
	`keyword` text,
	`keyword_mode` text DEFAULT 'present' NOT NULL,
	`paused` integer DEFAULT false NOT NULL,
	`status` text DEFAULT 'unknown' NOT NULL,
	`status_since` integer,
	`certificate_expires_at` integer,
	`certificate_warned_for` integer,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `uptime_probes` (
	`id` integer PRIMARY KEY NOT NULL,
	`site_id` text NOT NULL,
	`at` integer NOT NULL,
	`up` integer NOT NULL,
	`http_status` integer,
	`response_ms` integer,
	`cause` text,
	`certificate_expires_at` integer
);
--> statement-breakpoint
CREATE INDEX `uptime_probes_at_idx` ON `uptime_probes` (`at`);--> statement-breakpoint
CREATE TABLE `uptime_rollup_marks` (
	`name` text PRIMARY KEY NOT NULL,
	`until` integer DEFAULT 0 NOT NULL
);
