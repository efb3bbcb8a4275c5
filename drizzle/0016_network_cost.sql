ALTER TABLE "transfers" ADD COLUMN "network_cost_amount" text;--> statement-breakpoint
ALTER TABLE "transfers" ADD COLUMN "network_cost_usd" double precision;