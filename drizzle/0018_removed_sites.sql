CREATE TABLE `removed_sites` (
	`site_id` text PRIMARY KEY NOT NULL,
	`removed_at` integer NOT NULL,
	`keep_until` integer NOT NULL
);
