CREATE TABLE "provider_quotas" (
	"bucket" text PRIMARY KEY NOT NULL,
	"milli_tokens" bigint NOT NULL,
	"refilled_at" timestamp with time zone DEFAULT now() NOT NULL
);
