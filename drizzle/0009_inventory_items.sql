CREATE TABLE `inventory_items` (
	`site_id` text NOT NULL,
	`type` text NOT NULL,
	`slug` text NOT NULL,
	`name` text NOT NULL,
	`version` text NOT NULL,
	`update_version` text,
	`active` integer NOT NULL,
	PRIMARY KEY(`site_id`, `type`, `slug`),
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `inventory_items_item_idx` ON `inventory_items` (`type`,`slug`,`version`,`active`,`update_version`,`name`);--> statement-breakpoint
CREATE INDEX `inventory_items_pending_idx` ON `inventory_items` (`type`,`slug`,`update_version`,`version`,`name`) WHERE "inventory_items"."update_version" is not null;--> statement-breakpoint
-- Sites synced before this release: their rows come from the stored inventories, so fleet views are right at once.
INSERT OR IGNORE INTO `inventory_items` (`site_id`, `type`, `slug`, `name`, `version`, `update_version`, `active`)
SELECT i.`site_id`, 'plugin', json_extract(p.value, '$.slug'), json_extract(p.value, '$.name'), json_extract(p.value, '$.version'),
  json_extract(p.value, '$.update.version'), json_extract(p.value, '$.status') <> 'inactive'
FROM `site_inventories` i, json_each(i.`plugins_json`) p;--> statement-breakpoint
INSERT OR IGNORE INTO `inventory_items` (`site_id`, `type`, `slug`, `name`, `version`, `update_version`, `active`)
SELECT i.`site_id`, 'theme', json_extract(t.value, '$.slug'), json_extract(t.value, '$.name'), json_extract(t.value, '$.version'),
  json_extract(t.value, '$.update.version'), json_extract(t.value, '$.status') = 'active'
FROM `site_inventories` i, json_each(i.`themes_json`) t;
