CREATE TABLE "change_notes" (
	"route_id" text NOT NULL,
	"generation" integer NOT NULL,
	"asset" text NOT NULL,
	"label" text NOT NULL,
	"value" text NOT NULL,
	"left_at" timestamp with time zone NOT NULL,
	"swept_amount" text,
	"swept_tx_hash" text,
	"swept_at" timestamp with time zone,
	CONSTRAINT "change_notes_route_id_generation_pk" PRIMARY KEY("route_id","generation")
);
