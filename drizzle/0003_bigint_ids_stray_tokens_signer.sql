CREATE TABLE "deposit_tokens" (
	"route_id" text NOT NULL,
	"chain_id" bigint NOT NULL,
	"token" text NOT NULL,
	"tx_hash" text NOT NULL,
	"block_number" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "deposit_tokens_route_id_token_pk" PRIMARY KEY("route_id","token")
);
--> statement-breakpoint
CREATE TABLE "signer_fingerprints" (
	"name" text PRIMARY KEY NOT NULL,
	"address" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "stray_scan_cursors" (
	"chain_id" bigint PRIMARY KEY NOT NULL,
	"next_block" bigint NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "ledger_entries" ALTER COLUMN "chain_id" SET DATA TYPE bigint;--> statement-breakpoint
ALTER TABLE "transfers" ALTER COLUMN "account_index" SET DATA TYPE bigint;--> statement-breakpoint
ALTER TABLE "transfers" ALTER COLUMN "source_chain_id" SET DATA TYPE bigint;--> statement-breakpoint
ALTER TABLE "transfers" ALTER COLUMN "dest_chain_id" SET DATA TYPE bigint;--> statement-breakpoint
ALTER TABLE "transfers" ALTER COLUMN "hub_chain_id" SET DATA TYPE bigint;--> statement-breakpoint
ALTER TABLE "tx_intents" ALTER COLUMN "chain_id" SET DATA TYPE bigint;