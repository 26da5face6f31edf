CREATE TABLE `api_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`scope` text NOT NULL,
	`token_hash` text NOT NULL,
	`prefix` text NOT NULL,
	`created_at` integer NOT NULL,
	`last_used_at` integer,
	`revoked_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_tokens_token_hash_unique` ON `api_tokens` (`token_hash`);--> statement-breakpoint
CREATE INDEX `api_tokens_name_idx` ON `api_tokens` (`name`);--> statement-breakpoint
CREATE TABLE `site_inventories` (
	`site_id` text PRIMARY KEY NOT NULL,
	`plugins_json` text NOT NULL,
	`themes_json` text NOT NULL,
	`synced_at` integer NOT NULL,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `sites` (
	`id` text PRIMARY KEY NOT NULL,
	`url` text NOT NULL,
	`rest_url` text NOT NULL,
	`name` text,
	`state` text NOT NULL,
	`username` text,
	`credential_sealed` text,
	`application_password_uuid` text,
	`authorization_state_hash` text,
	`authorization_app_id` text,
	`authorization_url` text,
	`authorization_expires_at` integer,
	`state_reason` text,
	`wordpress_version` text,
	`php_version` text,
	`connector_version` text,
	`last_synced_at` integer,
	`last_sync_attempt_at` integer,
	`sync_error` text,
	`connected_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sites_url_unique` ON `sites` (`url`);--> statement-breakpoint
CREATE UNIQUE INDEX `sites_authorization_state_hash_unique` ON `sites` (`authorization_state_hash`);--> statement-breakpoint
CREATE INDEX `sites_state_idx` ON `sites` (`state`);