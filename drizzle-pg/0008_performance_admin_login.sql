CREATE TABLE "admin_login_settings" (
	"site_id" text PRIMARY KEY NOT NULL,
	"enabled" boolean NOT NULL
);
--> statement-breakpoint
CREATE TABLE "performance_audits" (
	"id" text PRIMARY KEY NOT NULL,
	"site_id" text NOT NULL,
	"url" text NOT NULL,
	"form_factor" text NOT NULL,
	"trigger" text NOT NULL,
	"runs" integer NOT NULL,
	"status" text NOT NULL,
	"queued_at" timestamp (3) with time zone NOT NULL,
	"started_at" timestamp (3) with time zone,
	"finished_at" timestamp (3) with time zone,
	"lighthouse_version" text,
	"chrome_version" text,
	"score_performance" double precision,
	"score_accessibility" double precision,
	"score_best_practices" double precision,
	"score_seo" double precision,
	"fcp_ms" double precision,
	"lcp_ms" double precision,
	"tbt_ms" double precision,
	"cls" double precision,
	"speed_index_ms" double precision,
	"ttfb_ms" double precision,
	"failure_reason" text,
	"failure_message" text,
	"report_bytes" integer
);
--> statement-breakpoint
CREATE TABLE "performance_settings" (
	"site_id" text PRIMARY KEY NOT NULL,
	"enabled" boolean NOT NULL,
	"form_factors" text NOT NULL,
	"runs" integer NOT NULL,
	"interval_hours" integer,
	"last_scheduled_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "admin_login_settings" ADD CONSTRAINT "admin_login_settings_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "performance_audits" ADD CONSTRAINT "performance_audits_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "performance_settings" ADD CONSTRAINT "performance_settings_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "performance_audits_site_idx" ON "performance_audits" USING btree ("site_id","form_factor","id");--> statement-breakpoint
CREATE INDEX "performance_audits_status_idx" ON "performance_audits" USING btree ("status");--> statement-breakpoint
CREATE INDEX "performance_audits_site_scores_idx" ON "performance_audits" USING btree ("site_id","id","score_performance") WHERE "performance_audits"."status" = 'completed';