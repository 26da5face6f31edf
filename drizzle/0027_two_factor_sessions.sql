-- Two-factor sign-in (issue 33): a user's TOTP secret, sealed with the daemon's secret box (null: not
-- enrolled); the secret of an enrolment begun but not yet confirmed with a code; when it was turned on;
-- and the last time step a code was accepted for, so a code is never accepted twice.
ALTER TABLE `users` ADD `totp_secret` text;
--> statement-breakpoint
ALTER TABLE `users` ADD `totp_pending_secret` text;
--> statement-breakpoint
ALTER TABLE `users` ADD `totp_enabled_at` integer;
--> statement-breakpoint
ALTER TABLE `users` ADD `totp_last_step` integer;
--> statement-breakpoint
-- Where a session was opened from: the client's address and its user agent (bounded, control characters stripped).
ALTER TABLE `sessions` ADD `address` text;
--> statement-breakpoint
ALTER TABLE `sessions` ADD `user_agent` text;
--> statement-breakpoint
-- Single-use recovery codes, stored as SHA-256 hashes (each has 80 random bits); shown once.
CREATE TABLE `recovery_codes` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`code_hash` text NOT NULL,
	`created_at` integer NOT NULL,
	`used_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `recovery_codes_user_idx` ON `recovery_codes` (`user_id`);
--> statement-breakpoint
-- The owners' two-factor policy: one row (id 1); no row is "not required".
CREATE TABLE `two_factor_settings` (
	`id` integer PRIMARY KEY NOT NULL,
	`required` integer NOT NULL,
	`changed_at` integer NOT NULL,
	`changed_by` text
);
