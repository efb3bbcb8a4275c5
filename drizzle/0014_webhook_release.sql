DROP INDEX "webhook_deliveries_unstarted_idx";--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "deliver_after" timestamp with time zone;--> statement-breakpoint
-- Deliveries recorded before holds existed were never held: each could go out once it was recorded.
UPDATE "webhook_deliveries" SET "deliver_after" = "created_at";--> statement-breakpoint
CREATE INDEX "webhook_deliveries_unstarted_idx" ON "webhook_deliveries" USING btree ("deliver_after") WHERE "webhook_deliveries"."state" = 'pending' and "webhook_deliveries"."attempts" = 0;