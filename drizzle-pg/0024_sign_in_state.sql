CREATE TABLE "auth_failures" (
	"address" text PRIMARY KEY NOT NULL,
	"window_started_at" timestamp (3) with time zone NOT NULL,
	"failures" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sign_in_attempts" (
	"throttle" text NOT NULL,
	"key" text NOT NULL,
	"attempts" integer NOT NULL,
	"last_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "sign_in_attempts_throttle_key_pk" PRIMARY KEY("throttle","key")
);
--> statement-breakpoint
CREATE TABLE "sign_in_tickets" (
	"id_hash" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"value" jsonb NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "auth_failures_window_idx" ON "auth_failures" USING btree ("window_started_at");--> statement-breakpoint
CREATE INDEX "sign_in_attempts_last_idx" ON "sign_in_attempts" USING btree ("last_at");--> statement-breakpoint
CREATE INDEX "sign_in_tickets_expires_idx" ON "sign_in_tickets" USING btree ("expires_at");