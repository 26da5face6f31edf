ALTER TABLE `update_history` ADD `restore_point` text;--> statement-breakpoint
ALTER TABLE `update_history` ADD `rollback_of` text;--> statement-breakpoint
CREATE INDEX `update_history_rollback_of_idx` ON `update_history` (`rollback_of`) WHERE "update_history"."rollback_of" is not null;