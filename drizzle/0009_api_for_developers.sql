CREATE TABLE "idempotency_keys" (
	"key_digest" text PRIMARY KEY NOT NULL,
	"request_digest" text NOT NULL,
	"route_id" text,
	"sealed_response" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"event_id" text PRIMARY KEY NOT NULL,
	"route_id" text NOT NULL,
	"status" text NOT NULL,
	"status_seq" integer NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_response_status" integer,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_attempt_at" timestamp with time zone,
	"delivered_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "transfers" ADD COLUMN "deposit_tx_hash" text;--> statement-breakpoint
ALTER TABLE "transfers" ADD COLUMN "bridge_in_tx_hash" text;--> statement-breakpoint
ALTER TABLE "transfers" ADD COLUMN "webhook_url" text;--> statement-breakpoint
CREATE INDEX "idempotency_keys_expires_idx" ON "idempotency_keys" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_route_idx" ON "webhook_deliveries" USING btree ("route_id");