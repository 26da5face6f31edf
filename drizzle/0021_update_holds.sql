CREATE TABLE `update_holds` (
	`id` text PRIMARY KEY NOT NULL,
	`site_id` text NOT NULL,
	`item_type` text NOT NULL,
	`slug` text NOT NULL,
	`version` text NOT NULL,
	`outcome` text NOT NULL,
	`reason` text,
	`message` text,
	`safe_update_id` text,
	`held_at` integer NOT NULL,
	`released_at` integer,
	`released_by_kind` text,
	`released_by_id` text,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `update_holds_active_idx` ON `update_holds` (`site_id`,`item_type`,`slug`,`version`) WHERE released_at is null;--> statement-breakpoint
CREATE INDEX `update_holds_site_idx` ON `update_holds` (`site_id`,`id`);