CREATE TABLE "transfer_statuses" (
	"route_id" text NOT NULL,
	"status_seq" integer NOT NULL,
	"status" text NOT NULL,
	"reached_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "transfer_statuses_route_id_status_seq_pk" PRIMARY KEY("route_id","status_seq")
);
--> statement-breakpoint
ALTER TABLE "pool_notes" ADD COLUMN "approved_at" timestamp with time zone;--> statement-breakpoint
-- A note withdrawn before approvals were recorded was approved by its withdrawal at the latest.
UPDATE "pool_notes" SET "approved_at" = "withdrawn_at" WHERE "withdrawn_at" IS NOT NULL;
--> statement-breakpoint
-- Each transfer's current status, as reached when it was last written (earlier ones were not recorded).
INSERT INTO "transfer_statuses" ("route_id", "status_seq", "status", "reached_at") SELECT "route_id", "status_seq", "status", "updated_at" FROM "transfers" ON CONFLICT DO NOTHING;
