-- Site scopes (issue 33, docs/design/team-access.md): a user or a token may be limited to the sites
-- carrying any of a set of tags. A JSON array of tags; null: not limited (every site). An owner is
-- never limited, a client always (no tags: no site). The single `scope_tag` of old becomes a set.
ALTER TABLE `users` ADD `scope_tags` text;
--> statement-breakpoint
UPDATE `users` SET `scope_tags` = json_array(`scope_tag`) WHERE `scope_tag` IS NOT NULL;
--> statement-breakpoint
ALTER TABLE `users` DROP COLUMN `scope_tag`;
--> statement-breakpoint
-- A token's own tags (null: its user's scope); at each request its scope is the intersection of its
-- own and its user's (tokens.repository.ts reads the user's `scope_tags` with the token's row).
ALTER TABLE `api_tokens` ADD `tags` text;
