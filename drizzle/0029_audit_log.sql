-- The audit log (issue 33, docs/design/team-access.md): every state-changing request, refusals
-- included, and every sign-in attempt. Append-only: the triggers below refuse any UPDATE, and any
-- DELETE but the retention prune's.
CREATE TABLE `audit_log` (
	`id` text PRIMARY KEY NOT NULL,
	`at` integer NOT NULL,
	`source` text NOT NULL,
	`actor_kind` text,
	`actor_id` text,
	`actor_name` text,
	`user_id` text,
	`address` text NOT NULL,
	`method` text,
	`action` text NOT NULL,
	`site_id` text,
	`target_kind` text,
	`target_id` text,
	`status` integer NOT NULL,
	`outcome` text NOT NULL,
	`problem` text
);
--> statement-breakpoint
CREATE INDEX `audit_log_at_idx` ON `audit_log` (`at`);
--> statement-breakpoint
CREATE INDEX `audit_log_site_idx` ON `audit_log` (`site_id`,`id`);
--> statement-breakpoint
CREATE INDEX `audit_log_actor_idx` ON `audit_log` (`actor_id`,`id`);
--> statement-breakpoint
CREATE INDEX `audit_log_user_idx` ON `audit_log` (`user_id`,`id`);
--> statement-breakpoint
-- The retention prune's gate: within its transaction it inserts the cutoff, deletes the rows older
-- than it and empties this table again, so outside a prune it is always empty.
CREATE TABLE `audit_log_prune_gate` (
	`cutoff` integer NOT NULL
);
--> statement-breakpoint
CREATE TRIGGER `audit_log_no_update` BEFORE UPDATE ON `audit_log`
BEGIN
	SELECT RAISE(ABORT, 'audit_log is append-only');
END;
--> statement-breakpoint
-- A row goes only when it is older than a cutoff the prune declared in the same transaction.
CREATE TRIGGER `audit_log_no_delete` BEFORE DELETE ON `audit_log`
WHEN OLD.`at` >= coalesce((SELECT max(`cutoff`) FROM `audit_log_prune_gate`), -1)
BEGIN
	SELECT RAISE(ABORT, 'audit_log rows are removed only by the retention prune');
END;
