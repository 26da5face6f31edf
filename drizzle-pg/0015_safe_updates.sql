CREATE TABLE "rollback_secrets" (
	"site_id" text PRIMARY KEY NOT NULL,
	"secret_sealed" text NOT NULL,
	"provisioned_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "safe_updates" (
	"id" text PRIMARY KEY NOT NULL,
	"site_id" text NOT NULL,
	"item_type" text NOT NULL,
	"slug" text NOT NULL,
	"status" text NOT NULL,
	"phase" text NOT NULL,
	"reason" text,
	"message" text,
	"policy" text NOT NULL,
	"from_version" text,
	"to_version" text,
	"restore_point_id" text,
	"restore_point_target" text,
	"backup_id" text,
	"report" text DEFAULT '{}' NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"started_at" timestamp (3) with time zone,
	"finished_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "rollback_secrets" ADD CONSTRAINT "rollback_secrets_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "safe_updates" ADD CONSTRAINT "safe_updates_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "safe_updates_site_idx" ON "safe_updates" USING btree ("site_id","created_at");