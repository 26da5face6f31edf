-- How a session was opened (issue 33): a password, then the second factor when on, or single sign-on, whose second factor is the provider's; owners' two-factor requirement concerns password sessions. Sessions from before were opened by password.
ALTER TABLE `sessions` ADD `sign_in_method` text DEFAULT 'password' NOT NULL;
