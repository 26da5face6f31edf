CREATE TABLE "job_cancel_requests" (
	"job_id" text PRIMARY KEY NOT NULL,
	"requested_by_kind" text,
	"requested_by_id" text,
	"requested_at" timestamp (3) with time zone NOT NULL
);
