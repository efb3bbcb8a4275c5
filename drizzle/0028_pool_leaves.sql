CREATE TABLE "pool_leaf_cursors" (
	"chain_id" integer NOT NULL,
	"pool" text NOT NULL,
	"scanned_to" bigint NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "pool_leaf_cursors_chain_id_pool_pk" PRIMARY KEY("chain_id","pool")
);
--> statement-breakpoint
CREATE TABLE "pool_leaves" (
	"chain_id" integer NOT NULL,
	"pool" text NOT NULL,
	"leaf_index" integer NOT NULL,
	"leaf" text NOT NULL,
	CONSTRAINT "pool_leaves_chain_id_pool_leaf_index_pk" PRIMARY KEY("chain_id","pool","leaf_index")
);
