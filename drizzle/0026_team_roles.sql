-- Roles (issue 33, docs/design/team-access.md): a user is owner, manager, viewer or client; `admin`,
-- the only role so far, could do everything and becomes `owner`.
UPDATE `users` SET `role` = 'owner' WHERE `role` = 'admin';
--> statement-breakpoint
-- An API token belongs to a user (null: an operator token, made with the CLI without --user, like the
-- bootstrap token, which is written before the first user exists) and has a role and an expiry. No
-- foreign key: tokens/ and users/ are features of one tier and stay apart; a token whose user is gone
-- is refused like a revoked one (tokens.repository.ts).
ALTER TABLE `api_tokens` ADD `user_id` text;
--> statement-breakpoint
ALTER TABLE `api_tokens` ADD `role` text DEFAULT 'viewer' NOT NULL;
--> statement-breakpoint
ALTER TABLE `api_tokens` ADD `expires_at` integer;
--> statement-breakpoint
-- A write token could do everything: it becomes an owner token (automation keeps working); a read
-- token becomes a viewer's. `scope` stays, written as the deprecated alias of the role.
UPDATE `api_tokens` SET `role` = CASE `scope` WHEN 'write' THEN 'owner' ELSE 'viewer' END;
--> statement-breakpoint
-- Existing tokens belong to the oldest user (the bootstrap admin); with no user yet they stay operator tokens.
UPDATE `api_tokens` SET `user_id` = (SELECT `id` FROM `users` ORDER BY `created_at`, `id` LIMIT 1);
--> statement-breakpoint
CREATE INDEX `api_tokens_user_idx` ON `api_tokens` (`user_id`);
