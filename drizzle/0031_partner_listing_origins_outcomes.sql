ALTER TABLE "api_keys" ADD COLUMN "webhook_url" text;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "allowed_origins" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "transfers" ADD COLUMN "external_id" text;--> statement-breakpoint
ALTER TABLE "transfers" ADD COLUMN "failure_code" text;--> statement-breakpoint
CREATE INDEX "deposit_transfers_tx_hash_idx" ON "deposit_transfers" USING btree ("tx_hash");--> statement-breakpoint
CREATE INDEX "transfers_partner_listing_idx" ON "transfers" USING btree ("partner_id","created_at","route_id") WHERE "transfers"."partner_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "transfers_partner_external_id_uq" ON "transfers" USING btree ("partner_id","external_id") WHERE "transfers"."external_id" is not null;