CREATE TABLE "update_history" (
	"id" text PRIMARY KEY NOT NULL,
	"site_id" text NOT NULL,
	"type" text NOT NULL,
	"slug" text,
	"from_version" text,
	"to_version" text,
	"started_at" timestamp (3) with time zone NOT NULL,
	"finished_at" timestamp (3) with time zone,
	"trigger_kind" text NOT NULL,
	"trigger_id" text,
	"job_id" text,
	"safe_update_id" text,
	"restore_point" text,
	"rollback_of" text,
	"result" text NOT NULL,
	"reason" text,
	"error" text
);
--> statement-breakpoint
ALTER TABLE "update_history" ADD CONSTRAINT "update_history_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "update_history_site_idx" ON "update_history" USING btree ("site_id","id");--> statement-breakpoint
CREATE INDEX "update_history_job_idx" ON "update_history" USING btree ("job_id");--> statement-breakpoint
CREATE INDEX "update_history_safe_update_idx" ON "update_history" USING btree ("safe_update_id") WHERE "update_history"."safe_update_id" is not null;--> statement-breakpoint
CREATE INDEX "update_history_rollback_of_idx" ON "update_history" USING btree ("rollback_of") WHERE "update_history"."rollback_of" is not null;