CREATE TABLE "audit_log" (
	"id" text PRIMARY KEY NOT NULL,
	"at" timestamp (3) with time zone NOT NULL,
	"source" text NOT NULL,
	"actor_kind" text,
	"actor_id" text,
	"actor_name" text,
	"user_id" text,
	"address" text NOT NULL,
	"method" text,
	"action" text NOT NULL,
	"site_id" text,
	"target_kind" text,
	"target_id" text,
	"status" integer NOT NULL,
	"outcome" text NOT NULL,
	"problem" text
);
--> statement-breakpoint
CREATE INDEX "audit_log_at_idx" ON "audit_log" USING btree ("at");--> statement-breakpoint
CREATE INDEX "audit_log_site_idx" ON "audit_log" USING btree ("site_id","id");--> statement-breakpoint
CREATE INDEX "audit_log_actor_idx" ON "audit_log" USING btree ("actor_id","id");--> statement-breakpoint
CREATE INDEX "audit_log_user_idx" ON "audit_log" USING btree ("user_id","id");