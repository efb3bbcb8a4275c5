CREATE TABLE "class_exit_epochs" (
	"amount_class" text NOT NULL,
	"starts_at" timestamp with time zone NOT NULL,
	"chance" double precision NOT NULL,
	"flush" boolean NOT NULL,
	"entries" integer NOT NULL,
	"target" integer NOT NULL,
	CONSTRAINT "class_exit_epochs_amount_class_starts_at_pk" PRIMARY KEY("amount_class","starts_at")
);
--> statement-breakpoint
ALTER TABLE "pool_notes" ADD COLUMN "gated_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "pool_notes" ADD COLUMN "gate_reason" text;--> statement-breakpoint
ALTER TABLE "pool_notes" ADD COLUMN "gate_log" jsonb;--> statement-breakpoint
ALTER TABLE "pool_notes" ADD COLUMN "exit_seed" text;--> statement-breakpoint
ALTER TABLE "pool_notes" ADD COLUMN "exit_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "pool_notes" ADD COLUMN "exit_epoch_at" timestamp with time zone;