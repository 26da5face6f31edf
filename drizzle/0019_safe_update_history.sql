ALTER TABLE `update_history` ADD `safe_update_id` text;--> statement-breakpoint
CREATE INDEX `update_history_safe_update_idx` ON `update_history` (`safe_update_id`);