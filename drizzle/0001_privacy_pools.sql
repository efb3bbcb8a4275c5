CREATE TABLE "pool_notes" (
	"route_id" text PRIMARY KEY NOT NULL,
	"asset" text NOT NULL,
	"label" text NOT NULL,
	"commitment" text NOT NULL,
	"value" text NOT NULL,
	"bucket" text NOT NULL,
	"tx_hash" text NOT NULL,
	"block_number" text NOT NULL,
	"deposited_at" timestamp with time zone NOT NULL,
	"withdrawn_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "transfers" ADD COLUMN "min_anonymity_set" integer;--> statement-breakpoint
ALTER TABLE "transfers" ADD COLUMN "anonymity_set" integer;--> statement-breakpoint
ALTER TABLE "transfers" ADD COLUMN "privacy_waited_seconds" integer;