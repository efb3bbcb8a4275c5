CREATE TABLE "deposit_transfers" (
	"route_id" text NOT NULL,
	"tx_hash" text NOT NULL,
	"log_index" integer NOT NULL,
	"block_number" bigint NOT NULL,
	"sender" text NOT NULL,
	"value" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "deposit_transfers_route_id_tx_hash_log_index_pk" PRIMARY KEY("route_id","tx_hash","log_index")
);
