CREATE TABLE `site_environments` (
	`site_id` text PRIMARY KEY NOT NULL,
	`database_type` text,
	`database_version` text,
	`time_zone` text,
	`synced_at` integer NOT NULL,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `update_offers` (
	`site_id` text NOT NULL,
	`type` text NOT NULL,
	`slug` text NOT NULL,
	`version` text NOT NULL,
	`first_seen_at` integer NOT NULL,
	PRIMARY KEY(`site_id`, `type`, `slug`, `version`),
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `update_policies` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`site_id` text,
	`tag` text,
	`priority` integer NOT NULL,
	`settings_json` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `update_policies_site_idx` ON `update_policies` (`site_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `update_policies_tag_idx` ON `update_policies` (`tag`);--> statement-breakpoint
CREATE TABLE `update_policy_runs` (
	`policy_id` text NOT NULL,
	`site_id` text NOT NULL,
	`window_start` integer NOT NULL,
	`window_end` integer NOT NULL,
	`started_at` integer NOT NULL,
	`job_id` text,
	`targets` integer NOT NULL,
	PRIMARY KEY(`policy_id`, `site_id`, `window_start`),
	FOREIGN KEY (`policy_id`) REFERENCES `update_policies`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `update_policy_runs_site_idx` ON `update_policy_runs` (`site_id`,`started_at`);--> statement-breakpoint
-- Offers already pending at upgrade: first seen at the site's last sync (the earliest moment Sitewarden can vouch for).
INSERT OR IGNORE INTO `update_offers` (`site_id`, `type`, `slug`, `version`, `first_seen_at`)
SELECT it.`site_id`, it.`type`, it.`slug`, it.`update_version`, i.`synced_at`
FROM `inventory_items` it JOIN `site_inventories` i ON i.`site_id` = it.`site_id`
WHERE it.`update_version` IS NOT NULL;
