CREATE TABLE "uptime_shard_leases" (
	"shard" integer PRIMARY KEY NOT NULL,
	"holder" text,
	"expires_at" timestamp (3) with time zone,
	"claimed_until" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "uptime_workers" (
	"id" text PRIMARY KEY NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "uptime_workers_expires_idx" ON "uptime_workers" USING btree ("expires_at");