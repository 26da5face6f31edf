CREATE TABLE `backup_tag_retention` (
	`tag` text PRIMARY KEY NOT NULL,
	`keep_last` integer,
	`keep_days` integer,
	`keep_daily` integer,
	`keep_weekly` integer,
	`keep_monthly` integer,
	`keep_yearly` integer,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `backup_settings` ADD `keep_daily` integer;--> statement-breakpoint
ALTER TABLE `backup_settings` ADD `keep_weekly` integer;--> statement-breakpoint
ALTER TABLE `backup_settings` ADD `keep_monthly` integer;--> statement-breakpoint
ALTER TABLE `backup_settings` ADD `keep_yearly` integer;