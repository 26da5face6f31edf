-- Single sign-on (issue 33, docs/single-sign-on.md): a user signed in through OpenID Connect is known
-- by the provider's issuer and subject (`sub`), never by an e-mail address, which the provider may
-- let change hands. Both null: a local account that has never used single sign-on.
ALTER TABLE `users` ADD `oidc_issuer` text;
--> statement-breakpoint
ALTER TABLE `users` ADD `oidc_subject` text;
--> statement-breakpoint
CREATE UNIQUE INDEX `users_oidc_identity_idx` ON `users` (`oidc_issuer`,`oidc_subject`);
