CREATE SEQUENCE "public"."route_account_index_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE TABLE "bridge_orders" (
	"route_id" text NOT NULL,
	"leg" text NOT NULL,
	"request_id" text NOT NULL,
	"deposit_address" text NOT NULL,
	"amount_in" text NOT NULL,
	"amount_out" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "bridge_orders_route_id_leg_pk" PRIMARY KEY("route_id","leg")
);
--> statement-breakpoint
CREATE TABLE "ledger_entries" (
	"id" serial PRIMARY KEY NOT NULL,
	"route_id" text NOT NULL,
	"kind" text NOT NULL,
	"entry_key" text NOT NULL,
	"chain_id" integer NOT NULL,
	"token" text NOT NULL,
	"amount" text NOT NULL,
	"tx_hash" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "transfers" (
	"route_id" text PRIMARY KEY NOT NULL,
	"account_index" integer NOT NULL,
	"status" text NOT NULL,
	"status_seq" integer DEFAULT 0 NOT NULL,
	"error" text,
	"source_chain_id" integer NOT NULL,
	"dest_chain_id" integer NOT NULL,
	"hub_chain_id" integer NOT NULL,
	"symbol" text NOT NULL,
	"dest_symbol" text NOT NULL,
	"source_token" text NOT NULL,
	"source_decimals" integer NOT NULL,
	"dest_token" text NOT NULL,
	"dest_decimals" integer NOT NULL,
	"hub_token" text NOT NULL,
	"hub_decimals" integer NOT NULL,
	"amount" text NOT NULL,
	"quoted_output_amount" text NOT NULL,
	"fee_amount" text NOT NULL,
	"bridge_fee_amount" text NOT NULL,
	"privacy_fee_amount" text NOT NULL,
	"amount_in_usd" double precision,
	"quoted_output_usd" double precision,
	"fee_usd" double precision,
	"bridge_fee_usd" double precision,
	"privacy_fee_usd" double precision,
	"eta_seconds" integer NOT NULL,
	"route" jsonb NOT NULL,
	"deposit_address" text NOT NULL,
	"hub_account" text NOT NULL,
	"hub_is_smart_account" boolean NOT NULL,
	"exit_account" text NOT NULL,
	"user_destination_address" text NOT NULL,
	"refund_address" text,
	"needs_attention" boolean DEFAULT false NOT NULL,
	"parked_step" text,
	"last_error" text,
	"parked_since" timestamp with time zone,
	"held_funds" jsonb,
	"deposit_deadline" timestamp with time zone NOT NULL,
	"payout_tx_hash" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone,
	CONSTRAINT "transfers_account_index_unique" UNIQUE("account_index")
);
--> statement-breakpoint
CREATE TABLE "tx_intents" (
	"route_id" text NOT NULL,
	"step" text NOT NULL,
	"chain_id" integer NOT NULL,
	"from_address" text NOT NULL,
	"nonce" integer NOT NULL,
	"tx_hash" text NOT NULL,
	"raw_tx" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "tx_intents_route_id_step_pk" PRIMARY KEY("route_id","step")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_route_entry_uq" ON "ledger_entries" USING btree ("route_id","entry_key");--> statement-breakpoint
CREATE INDEX "transfers_status_idx" ON "transfers" USING btree ("status");--> statement-breakpoint
CREATE INDEX "transfers_attention_idx" ON "transfers" USING btree ("needs_attention");