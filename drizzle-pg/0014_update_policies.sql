CREATE TABLE "update_holds" (
	"id" text PRIMARY KEY NOT NULL,
	"site_id" text NOT NULL,
	"item_type" text NOT NULL,
	"slug" text NOT NULL,
	"version" text NOT NULL,
	"outcome" text NOT NULL,
	"reason" text,
	"message" text,
	"safe_update_id" text,
	"held_at" timestamp (3) with time zone NOT NULL,
	"released_at" timestamp (3) with time zone,
	"released_by_kind" text,
	"released_by_id" text
);
--> statement-breakpoint
CREATE TABLE "update_policies" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"site_id" text,
	"tag" text,
	"priority" integer NOT NULL,
	"settings_json" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "update_policy_runs" (
	"policy_id" text NOT NULL,
	"site_id" text NOT NULL,
	"window_start" timestamp (3) with time zone NOT NULL,
	"window_end" timestamp (3) with time zone NOT NULL,
	"started_at" timestamp (3) with time zone NOT NULL,
	"job_id" text,
	"targets" integer NOT NULL,
	CONSTRAINT "update_policy_runs_policy_id_site_id_window_start_pk" PRIMARY KEY("policy_id","site_id","window_start")
);
--> statement-breakpoint
ALTER TABLE "update_holds" ADD CONSTRAINT "update_holds_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "update_policies" ADD CONSTRAINT "update_policies_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "update_policy_runs" ADD CONSTRAINT "update_policy_runs_policy_id_update_policies_id_fk" FOREIGN KEY ("policy_id") REFERENCES "public"."update_policies"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "update_policy_runs" ADD CONSTRAINT "update_policy_runs_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "update_holds_active_idx" ON "update_holds" USING btree ("site_id","item_type","slug","version") WHERE released_at is null;--> statement-breakpoint
CREATE INDEX "update_holds_site_idx" ON "update_holds" USING btree ("site_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "update_policies_site_idx" ON "update_policies" USING btree ("site_id");--> statement-breakpoint
CREATE UNIQUE INDEX "update_policies_tag_idx" ON "update_policies" USING btree ("tag");--> statement-breakpoint
CREATE INDEX "update_policy_runs_site_idx" ON "update_policy_runs" USING btree ("site_id","started_at");