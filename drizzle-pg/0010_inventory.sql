CREATE TABLE "inventory_items" (
	"site_id" text NOT NULL,
	"type" text NOT NULL,
	"slug" text NOT NULL,
	"name" text NOT NULL,
	"version" text NOT NULL,
	"update_version" text,
	"active" boolean NOT NULL,
	CONSTRAINT "inventory_items_site_id_type_slug_pk" PRIMARY KEY("site_id","type","slug")
);
--> statement-breakpoint
CREATE TABLE "site_environments" (
	"site_id" text PRIMARY KEY NOT NULL,
	"database_type" text,
	"database_version" text,
	"time_zone" text,
	"synced_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "site_inventories" (
	"site_id" text PRIMARY KEY NOT NULL,
	"plugins_json" text NOT NULL,
	"themes_json" text NOT NULL,
	"synced_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "update_offers" (
	"site_id" text NOT NULL,
	"type" text NOT NULL,
	"slug" text NOT NULL,
	"version" text NOT NULL,
	"first_seen_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "update_offers_site_id_type_slug_version_pk" PRIMARY KEY("site_id","type","slug","version")
);
--> statement-breakpoint
ALTER TABLE "inventory_items" ADD CONSTRAINT "inventory_items_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "site_environments" ADD CONSTRAINT "site_environments_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "site_inventories" ADD CONSTRAINT "site_inventories_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "update_offers" ADD CONSTRAINT "update_offers_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "inventory_items_item_idx" ON "inventory_items" USING btree ("type","slug","version","active","update_version","name");--> statement-breakpoint
CREATE INDEX "inventory_items_pending_idx" ON "inventory_items" USING btree ("type","slug","update_version","version","name") WHERE "inventory_items"."update_version" is not null;--> statement-breakpoint
CREATE INDEX "inventory_items_site_pending_idx" ON "inventory_items" USING btree ("site_id") WHERE "inventory_items"."update_version" is not null;