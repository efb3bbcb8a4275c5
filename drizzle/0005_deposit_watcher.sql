ALTER TABLE "stray_scan_cursors" RENAME TO "deposit_watch_cursors";--> statement-breakpoint
ALTER TABLE "transfers" ADD COLUMN "deposit_seen_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "transfers" ADD COLUMN "deposit_checked_at" timestamp with time zone;--> statement-breakpoint
CREATE UNIQUE INDEX "transfers_deposit_address_uq" ON "transfers" USING btree ("source_chain_id","deposit_address");