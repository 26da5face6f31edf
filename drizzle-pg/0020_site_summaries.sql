CREATE TABLE "site_summaries" (
	"site_id" text PRIMARY KEY NOT NULL,
	"sort_name" text NOT NULL,
	"state" text NOT NULL,
	"sync_failing" boolean DEFAULT false NOT NULL,
	"uptime_status" text DEFAULT 'unknown' NOT NULL,
	"uptime_24h" double precision,
	"uptime_30d" double precision,
	"response_ms" integer,
	"score" double precision,
	"updates" integer DEFAULT 0 NOT NULL,
	"backup_status" text,
	"backup_at" bigint,
	"status" text GENERATED ALWAYS AS (case when state = 'pending' then 'pending' when uptime_status = 'down' then 'down' when uptime_status = 'up' and (sync_failing or score < 0.5) then 'degraded' else uptime_status end) STORED,
	"status_rank" integer GENERATED ALWAYS AS (case (case when state = 'pending' then 'pending' when uptime_status = 'down' then 'down' when uptime_status = 'up' and (sync_failing or score < 0.5) then 'degraded' else uptime_status end) when 'down' then 0 when 'degraded' then 1 when 'unknown' then 2 when 'pending' then 3 else 4 end) STORED,
	"backup_rank" integer GENERATED ALWAYS AS (case when backup_status = 'failed' then 0 when backup_status is null then 1 else 2 end) STORED
);
--> statement-breakpoint
ALTER TABLE "site_summaries" ADD CONSTRAINT "site_summaries_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "site_summaries_name_idx" ON "site_summaries" USING btree ("sort_name","site_id");--> statement-breakpoint
CREATE INDEX "site_summaries_status_idx" ON "site_summaries" USING btree ("status","site_id");--> statement-breakpoint
CREATE INDEX "site_summaries_status_rank_idx" ON "site_summaries" USING btree ("status_rank","site_id");--> statement-breakpoint
CREATE INDEX "site_summaries_uptime_24h_idx" ON "site_summaries" USING btree ("uptime_24h" NULLS FIRST,"site_id");--> statement-breakpoint
CREATE INDEX "site_summaries_uptime_30d_idx" ON "site_summaries" USING btree ("uptime_30d" NULLS FIRST,"site_id");--> statement-breakpoint
CREATE INDEX "site_summaries_response_idx" ON "site_summaries" USING btree ("response_ms" NULLS FIRST,"site_id");--> statement-breakpoint
CREATE INDEX "site_summaries_score_idx" ON "site_summaries" USING btree ("score" NULLS FIRST,"site_id");--> statement-breakpoint
CREATE INDEX "site_summaries_updates_idx" ON "site_summaries" USING btree ("updates","site_id");--> statement-breakpoint
CREATE INDEX "site_summaries_backup_rank_idx" ON "site_summaries" USING btree ("backup_rank","site_id");--> statement-breakpoint
CREATE INDEX "site_summaries_backup_at_idx" ON "site_summaries" USING btree ("backup_at" NULLS FIRST,"site_id");