ALTER TABLE "api_keys" ADD COLUMN "user_share_bps" integer;--> statement-breakpoint
ALTER TABLE "pool_notes" ADD COLUMN "voucher_tag" text;--> statement-breakpoint
ALTER TABLE "pool_notes" ADD COLUMN "voucher_share_bps" integer;--> statement-breakpoint
ALTER TABLE "transfers" ADD COLUMN "privacy_voucher" text;--> statement-breakpoint
ALTER TABLE "transfers" ADD COLUMN "privacy_voucher_share_bps" integer;