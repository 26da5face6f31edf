CREATE TABLE "site_tags" (
	"site_id" text NOT NULL,
	"tag" text NOT NULL,
	CONSTRAINT "site_tags_site_id_tag_pk" PRIMARY KEY("site_id","tag")
);
--> statement-breakpoint
CREATE TABLE "sites" (
	"id" text PRIMARY KEY NOT NULL,
	"url" text NOT NULL,
	"rest_url" text NOT NULL,
	"name" text,
	"state" text NOT NULL,
	"username" text,
	"credential_sealed" text,
	"application_password_uuid" text,
	"authorization_state_hash" text,
	"authorization_app_id" text,
	"authorization_url" text,
	"authorization_expires_at" timestamp (3) with time zone,
	"state_reason" text,
	"wordpress_version" text,
	"php_version" text,
	"connector_version" text,
	"last_synced_at" timestamp (3) with time zone,
	"last_sync_attempt_at" timestamp (3) with time zone,
	"sync_error" text,
	"connected_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "sites_url_unique" UNIQUE("url"),
	CONSTRAINT "sites_authorization_state_hash_unique" UNIQUE("authorization_state_hash")
);
--> statement-breakpoint
ALTER TABLE "site_tags" ADD CONSTRAINT "site_tags_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "site_tags_tag_idx" ON "site_tags" USING btree ("tag","site_id");--> statement-breakpoint
CREATE INDEX "sites_state_idx" ON "sites" USING btree ("state");