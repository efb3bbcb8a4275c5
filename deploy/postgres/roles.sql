-- Least-privilege database roles of private-route (docs/operations.md, "Database roles").
--
-- Two group roles; give each process a LOGIN role that is a member of one of them:
--   private_route_worker  owns the schema: the worker applies the migrations at start and runs every step.
--   private_route_api     what the internet-facing API needs, nothing more: no ledger (only its outcome view), notes, intents, operator
--                         audit, webhook targets; on transfers only INSERT and the UPDATE of its status columns
--                         (a create whose workflow cannot start marks its row FAILED), never its recipient or
--                         refund address. The API runs with DATABASE_MIGRATIONS=skip.
--   private_route_signer  the signer's spending policy (docs/security.md): SELECT on the route records it checks
--                         a request against, nothing else (its connection is read-only besides).
--
-- Order on a new database: run this file as a superuser (it creates the group roles), create the login roles
-- (below), start the worker once (it creates the tables as private_route_worker), run this file again (the grants
-- need the tables), then start the API. Run it again after every upgrade whose migrations add a table the API
-- reads: it is idempotent, and it first revokes what the API role held, so a grant removed here is removed there.
--
--   CREATE ROLE route_worker LOGIN PASSWORD '…' IN ROLE private_route_worker;
--   ALTER ROLE route_worker SET ROLE private_route_worker;   -- tables it creates belong to the group, not the login
--   CREATE ROLE route_api LOGIN PASSWORD '…' IN ROLE private_route_api;
--   CREATE ROLE route_signer LOGIN PASSWORD '…' IN ROLE private_route_signer;   -- the signer's SIGNER_DATABASE_URL
--   -- and, for a database created by the superuser:
--   ALTER DATABASE private_route OWNER TO private_route_worker;

DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'private_route_worker') THEN
    CREATE ROLE private_route_worker NOLOGIN;
  END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'private_route_api') THEN
    CREATE ROLE private_route_api NOLOGIN;
  END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'private_route_signer') THEN
    CREATE ROLE private_route_signer NOLOGIN;
  END IF;
END
$$;

GRANT USAGE, CREATE ON SCHEMA public TO private_route_worker;
GRANT USAGE ON SCHEMA public TO private_route_api;
GRANT USAGE ON SCHEMA public TO private_route_signer;

DO $$
DECLARE
  missing text;
BEGIN
  -- Before the worker's first start there are no tables to grant on yet: the roles exist, the grants wait.
  SELECT string_agg(name, ', ') INTO missing
    FROM unnest(ARRAY['transfers', 'transfer_statuses', 'pool_notes', 'price_epochs', 'idempotency_keys', 'api_keys',
                      'rate_limit_counters', 'service_secrets', 'signer_fingerprints', 'bridge_orders',
                      'deposit_transfers', 'ledger_entries', 'deposit_tokens', 'operator_actions', 'change_notes', 'quotes',
                      'provider_quotas', 'transfer_outcome_entries']) AS name
   WHERE to_regclass('public.' || name) IS NULL;
  IF missing IS NOT NULL THEN
    RAISE NOTICE 'tables % do not exist yet: start the worker once (it applies the migrations), then run this file again', missing;
    RETURN;
  END IF;

  REVOKE ALL ON ALL TABLES IN SCHEMA public FROM private_route_api;
  REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM private_route_api;

  -- creates: a route row, its first status, its account index
  GRANT SELECT, INSERT ON transfers TO private_route_api;
  GRANT UPDATE (status, error, failure_code, status_seq, updated_at, client_hash, privacy_client, privacy_voucher, status_token_hash, public_delay_seed) ON transfers TO private_route_api;
  GRANT SELECT, INSERT ON transfer_statuses TO private_route_api;
  GRANT USAGE ON SEQUENCE route_account_index_seq TO private_route_api;
  -- quotes: held prices of cross-asset quotes, amount advice from the pool's notes
  GRANT SELECT, INSERT, UPDATE ON price_epochs TO private_route_api;
  GRANT SELECT ON pool_notes TO private_route_api;
  -- quotes with a quoteId: recorded at the quote, read by the create citing it, expired ones deleted
  GRANT SELECT, INSERT, DELETE ON quotes TO private_route_api;
  -- Idempotency-Key replays, partner keys, abuse limits
  GRANT SELECT, INSERT, UPDATE, DELETE ON idempotency_keys TO private_route_api;
  GRANT SELECT ON api_keys TO private_route_api;
  GRANT SELECT, INSERT, UPDATE, DELETE ON rate_limit_counters TO private_route_api;
  -- the providers' request quotas every replica shares (a quote takes from Relay's)
  GRANT SELECT, INSERT, UPDATE ON provider_quotas TO private_route_api;
  -- a full view's outcomes (depositedAmount, refunds) and a key's lookup by deposit transaction: what arrived at the
  -- deposit address and what went back, never the ledger's pool entries (shield, unshield), which join a route's halves
  GRANT SELECT ON transfer_outcome_entries TO private_route_api;
  GRANT SELECT (route_id, tx_hash, value) ON deposit_transfers TO private_route_api;
  GRANT SELECT, INSERT ON service_secrets TO private_route_api;
  -- the start check that the API's xpubs are the worker's signer's
  GRANT SELECT, INSERT ON signer_fingerprints TO private_route_api;

  -- the signer's spending policy: what a route planned, funded, recorded and an operator named
  REVOKE ALL ON ALL TABLES IN SCHEMA public FROM private_route_signer;
  GRANT SELECT ON transfers, bridge_orders, deposit_transfers, ledger_entries, deposit_tokens, operator_actions, pool_notes,
    change_notes TO private_route_signer;
END
$$;
