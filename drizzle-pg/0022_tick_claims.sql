CREATE TABLE "scheduled_tick_claims" (
	"name" text NOT NULL,
	"slot" timestamp (3) with time zone NOT NULL,
	"claimed_by" text NOT NULL,
	"claimed_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "scheduled_tick_claims_name_slot_pk" PRIMARY KEY("name","slot")
);
