-- Transfers created before statusTokens had no stored hash, and their public view drew its delays from the routeId,
-- which whoever asks knows (issue 33). Each gets a random hash that no token has: still no token opens its full view,
-- and its public delays are now drawn from a value only the database holds.
UPDATE "transfers"
SET "status_token_hash" = encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')), 'hex')
WHERE "status_token_hash" IS NULL;
