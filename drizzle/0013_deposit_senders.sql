ALTER TABLE "pool_notes" ADD COLUMN "sender_tag" text;--> statement-breakpoint
ALTER TABLE "transfers" ADD COLUMN "deposit_sender" text;