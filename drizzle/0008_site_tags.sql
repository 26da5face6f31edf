CREATE TABLE `site_tags` (
	`site_id` text NOT NULL,
	`tag` text NOT NULL,
	PRIMARY KEY(`site_id`, `tag`),
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `site_tags_tag_idx` ON `site_tags` (`tag`,`site_id`);