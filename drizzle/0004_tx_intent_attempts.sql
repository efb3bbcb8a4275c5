ALTER TABLE "tx_intents" DROP CONSTRAINT "tx_intents_route_id_step_pk";--> statement-breakpoint
ALTER TABLE "tx_intents" ADD COLUMN "id" serial PRIMARY KEY NOT NULL;--> statement-breakpoint
ALTER TABLE "tx_intents" ADD COLUMN "attempt" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "tx_intents" ADD COLUMN "earlier_tx_hashes" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "tx_intents" ADD COLUMN "last_attempt_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "tx_intents" ADD COLUMN "status" text DEFAULT 'pending' NOT NULL;--> statement-breakpoint
ALTER TABLE "tx_intents" ADD COLUMN "mined_tx_hash" text;--> statement-breakpoint
ALTER TABLE "tx_intents" ADD COLUMN "void_reason" text;--> statement-breakpoint
CREATE UNIQUE INDEX "tx_intents_live_step_uq" ON "tx_intents" USING btree ("route_id","step") WHERE "tx_intents"."status" <> 'voided';--> statement-breakpoint
CREATE INDEX "tx_intents_sender_idx" ON "tx_intents" USING btree ("chain_id","from_address","nonce");