ALTER TABLE "api_keys" ADD COLUMN "fee_bps" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "webhook_secret_generation" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "webhook_previous_valid_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "transfers" ADD COLUMN "partner_id" integer;--> statement-breakpoint
ALTER TABLE "transfers" ADD COLUMN "partner_fee_amount" text;