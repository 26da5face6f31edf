CREATE TABLE "cluster_events" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "cluster_events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"origin" text NOT NULL,
	"event" text NOT NULL,
	"level" text NOT NULL,
	"fields" jsonb NOT NULL,
	"message" text,
	"at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "cluster_events_at_idx" ON "cluster_events" USING btree ("at");