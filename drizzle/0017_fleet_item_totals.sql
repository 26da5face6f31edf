CREATE TABLE `fleet_item_totals` (
	`type` text NOT NULL,
	`slug` text NOT NULL,
	`name` text NOT NULL,
	`sites` integer NOT NULL,
	`active` integer NOT NULL,
	`with_update` integer NOT NULL,
	PRIMARY KEY(`type`, `slug`)
);
--> statement-breakpoint
CREATE TABLE `fleet_item_versions` (
	`type` text NOT NULL,
	`slug` text NOT NULL,
	`version` text NOT NULL,
	`sites` integer NOT NULL,
	PRIMARY KEY(`type`, `slug`, `version`)
);
--> statement-breakpoint
INSERT INTO `fleet_item_totals` (`type`, `slug`, `name`, `sites`, `active`, `with_update`)
	SELECT `type`, `slug`, max(`name`), count(*), sum(`active`), count(`update_version`) FROM `inventory_items` GROUP BY `type`, `slug`;
--> statement-breakpoint
INSERT INTO `fleet_item_versions` (`type`, `slug`, `version`, `sites`)
	SELECT `type`, `slug`, `version`, count(*) FROM `inventory_items` GROUP BY `type`, `slug`, `version`;
--> statement-breakpoint
CREATE TRIGGER `fleet_item_counted` AFTER INSERT ON `inventory_items` BEGIN
	INSERT INTO `fleet_item_totals` (`type`, `slug`, `name`, `sites`, `active`, `with_update`)
		VALUES (new.`type`, new.`slug`, new.`name`, 1, new.`active`, new.`update_version` IS NOT NULL)
		ON CONFLICT (`type`, `slug`) DO UPDATE SET `name` = excluded.`name`, `sites` = `sites` + 1,
			`active` = `active` + excluded.`active`, `with_update` = `with_update` + excluded.`with_update`;
	INSERT INTO `fleet_item_versions` (`type`, `slug`, `version`, `sites`) VALUES (new.`type`, new.`slug`, new.`version`, 1)
		ON CONFLICT (`type`, `slug`, `version`) DO UPDATE SET `sites` = `sites` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `fleet_item_uncounted` AFTER DELETE ON `inventory_items` BEGIN
	UPDATE `fleet_item_totals` SET `sites` = `sites` - 1, `active` = `active` - old.`active`,
		`with_update` = `with_update` - (old.`update_version` IS NOT NULL)
		WHERE `type` = old.`type` AND `slug` = old.`slug`;
	DELETE FROM `fleet_item_totals` WHERE `type` = old.`type` AND `slug` = old.`slug` AND `sites` <= 0;
	UPDATE `fleet_item_versions` SET `sites` = `sites` - 1
		WHERE `type` = old.`type` AND `slug` = old.`slug` AND `version` = old.`version`;
	DELETE FROM `fleet_item_versions`
		WHERE `type` = old.`type` AND `slug` = old.`slug` AND `version` = old.`version` AND `sites` <= 0;
END;
--> statement-breakpoint
CREATE TRIGGER `fleet_item_recounted` AFTER UPDATE ON `inventory_items` BEGIN
	UPDATE `fleet_item_totals` SET `sites` = `sites` - 1, `active` = `active` - old.`active`,
		`with_update` = `with_update` - (old.`update_version` IS NOT NULL)
		WHERE `type` = old.`type` AND `slug` = old.`slug`;
	DELETE FROM `fleet_item_totals` WHERE `type` = old.`type` AND `slug` = old.`slug` AND `sites` <= 0;
	UPDATE `fleet_item_versions` SET `sites` = `sites` - 1
		WHERE `type` = old.`type` AND `slug` = old.`slug` AND `version` = old.`version`;
	DELETE FROM `fleet_item_versions`
		WHERE `type` = old.`type` AND `slug` = old.`slug` AND `version` = old.`version` AND `sites` <= 0;
	INSERT INTO `fleet_item_totals` (`type`, `slug`, `name`, `sites`, `active`, `with_update`)
		VALUES (new.`type`, new.`slug`, new.`name`, 1, new.`active`, new.`update_version` IS NOT NULL)
		ON CONFLICT (`type`, `slug`) DO UPDATE SET `name` = excluded.`name`, `sites` = `sites` + 1,
			`active` = `active` + excluded.`active`, `with_update` = `with_update` + excluded.`with_update`;
	INSERT INTO `fleet_item_versions` (`type`, `slug`, `version`, `sites`) VALUES (new.`type`, new.`slug`, new.`version`, 1)
		ON CONFLICT (`type`, `slug`, `version`) DO UPDATE SET `sites` = `sites` + 1;
END;
