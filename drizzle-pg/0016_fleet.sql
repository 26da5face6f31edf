CREATE TABLE "fleet_item_totals" (
	"type" text NOT NULL,
	"slug" text NOT NULL,
	"name" text NOT NULL,
	"sites" integer NOT NULL,
	"active" integer NOT NULL,
	"with_update" integer NOT NULL,
	CONSTRAINT "fleet_item_totals_type_slug_pk" PRIMARY KEY("type","slug")
);
--> statement-breakpoint
CREATE TABLE "fleet_item_versions" (
	"type" text NOT NULL,
	"slug" text NOT NULL,
	"version" text NOT NULL,
	"sites" integer NOT NULL,
	CONSTRAINT "fleet_item_versions_type_slug_version_pk" PRIMARY KEY("type","slug","version")
);
