CREATE TABLE `admin_login_settings` (
	`site_id` text PRIMARY KEY NOT NULL,
	`enabled` integer NOT NULL,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
