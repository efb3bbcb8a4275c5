CREATE TABLE "price_epochs" (
	"token" text NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"ends_at" timestamp with time zone NOT NULL,
	"usd_price" text NOT NULL,
	CONSTRAINT "price_epochs_token_started_at_pk" PRIMARY KEY("token","started_at")
);
--> statement-breakpoint
ALTER TABLE "pool_notes" ADD COLUMN "amount_class" text;--> statement-breakpoint
ALTER TABLE "pool_notes" ADD COLUMN "client_tag" text;--> statement-breakpoint
ALTER TABLE "pool_notes" ADD COLUMN "anonymity_members" jsonb;--> statement-breakpoint
ALTER TABLE "pool_notes" ADD COLUMN "proved_leaves" integer;--> statement-breakpoint
ALTER TABLE "transfers" ADD COLUMN "rounding_amount" text;--> statement-breakpoint
ALTER TABLE "transfers" ADD COLUMN "rounding_usd" double precision;--> statement-breakpoint
ALTER TABLE "transfers" ADD COLUMN "privacy_left_at_max_wait" boolean;--> statement-breakpoint
ALTER TABLE "transfers" ADD COLUMN "privacy_client" text;--> statement-breakpoint
CREATE INDEX "pool_notes_amount_class_idx" ON "pool_notes" USING btree ("amount_class");--> statement-breakpoint
ALTER TABLE "pool_notes" DROP COLUMN "bucket";