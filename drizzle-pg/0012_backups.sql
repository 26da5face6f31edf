CREATE TABLE "backup_settings" (
	"site_id" text PRIMARY KEY NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"interval_hours" integer,
	"keep_last" integer,
	"keep_days" integer,
	"keep_daily" integer,
	"keep_weekly" integer,
	"keep_monthly" integer,
	"keep_yearly" integer,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "backup_tag_retention" (
	"tag" text PRIMARY KEY NOT NULL,
	"keep_last" integer,
	"keep_days" integer,
	"keep_daily" integer,
	"keep_weekly" integer,
	"keep_monthly" integer,
	"keep_yearly" integer,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "backups" (
	"id" text PRIMARY KEY NOT NULL,
	"site_id" text NOT NULL,
	"kind" text NOT NULL,
	"status" text NOT NULL,
	"reason" text,
	"error" text,
	"manifest_hash" text,
	"targets" jsonb,
	"retry_of" text,
	"files" integer DEFAULT 0 NOT NULL,
	"files_done" integer DEFAULT 0 NOT NULL,
	"tables" integer DEFAULT 0 NOT NULL,
	"tables_done" integer DEFAULT 0 NOT NULL,
	"rows" bigint DEFAULT 0 NOT NULL,
	"bytes_total" bigint DEFAULT 0 NOT NULL,
	"bytes_transferred" bigint DEFAULT 0 NOT NULL,
	"bytes_stored" bigint DEFAULT 0 NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"started_at" timestamp (3) with time zone,
	"finished_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "restores" (
	"id" text PRIMARY KEY NOT NULL,
	"site_id" text NOT NULL,
	"backup_id" text NOT NULL,
	"source_target" text,
	"pre_restore_backup_id" text,
	"status" text NOT NULL,
	"reason" text,
	"error" text,
	"files_restored" integer DEFAULT 0 NOT NULL,
	"files_deleted" integer DEFAULT 0 NOT NULL,
	"tables_restored" integer DEFAULT 0 NOT NULL,
	"bytes_transferred" bigint DEFAULT 0 NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"started_at" timestamp (3) with time zone,
	"finished_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "removed_sites" (
	"site_id" text PRIMARY KEY NOT NULL,
	"removed_at" timestamp (3) with time zone NOT NULL,
	"keep_until" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "backup_settings" ADD CONSTRAINT "backup_settings_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "backups" ADD CONSTRAINT "backups_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "restores" ADD CONSTRAINT "restores_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "backups_site_idx" ON "backups" USING btree ("site_id","id");--> statement-breakpoint
CREATE INDEX "backups_status_idx" ON "backups" USING btree ("status");--> statement-breakpoint
CREATE INDEX "restores_site_idx" ON "restores" USING btree ("site_id","id");--> statement-breakpoint
CREATE INDEX "restores_status_idx" ON "restores" USING btree ("status");