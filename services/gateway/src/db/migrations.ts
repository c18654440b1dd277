/**
 * The gateway's schema, as an ordered list of versioned migrations. Kept as TypeScript (SQL in strings) so
 * that the same list is found from `tsx src/…` and from the compiled `dist/…` without copying files.
 *
 * Never edit a migration that has shipped: append a new one with the next id.
 *
 * Money (`max_budget`, `spend`) is `numeric` (USD): spend is incremented by millions of tiny costs
 * (1e-7 USD), which stay exact in `numeric` where a `double precision` total would drift.
 */

/** One schema change, applied once, in id order, inside a transaction. */
export interface Migration {
  /** Strictly increasing, never reused. */
  id: number;
  name: string;
  sql: string;
}

/**
 * Creates the `vector` extension and the semantic cache's table when the server has pgvector, else nothing;
 * idempotent (migration 14, and the semantic cache's start on a database migrated before pgvector was installed).
 * `filter_key`: the SHA-256 of everything of the request that must match exactly (model group and its config
 * version, scope, namespace, system prompt, parameters: `response-cache/semantic/`); `entry`: the stored
 * answer (`response-cache/types.ts` CachedAnswer).
 */
export const SEMANTIC_CACHE_TABLE_SQL = `
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') THEN
    CREATE EXTENSION IF NOT EXISTS vector;
    CREATE TABLE IF NOT EXISTS semantic_cache_entries (
      id          bigserial PRIMARY KEY,
      filter_key  text NOT NULL CHECK (filter_key ~ '^[0-9a-f]{64}$'),
      scope       text NOT NULL,
      embedding   vector NOT NULL,
      entry       jsonb NOT NULL,
      created_at  timestamptz NOT NULL DEFAULT now(),
      expires_at  timestamptz NOT NULL
    );
    CREATE INDEX IF NOT EXISTS semantic_cache_entries_filter_idx
      ON semantic_cache_entries (filter_key, expires_at);
  END IF;
END
$$;
`;

/**
 * Migration 15: `semantic_cache_hnsw_index(dims)` creates (once: IF NOT EXISTS) the HNSW index
 * `semantic_cache_entries_hnsw_<dims>` on `(embedding::vector(dims)) vector_cosine_ops` over the rows
 * `WHERE vector_dims(embedding) = dims`; it does nothing for a dimension HNSW cannot index (pgvector: 1..2,000).
 */
export const SEMANTIC_CACHE_INDEX_FUNCTION_SQL = `
CREATE OR REPLACE FUNCTION semantic_cache_hnsw_index(dims integer) RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
  IF dims < 1 OR dims > 2000 THEN
    RETURN;
  END IF;
  EXECUTE format(
    'CREATE INDEX IF NOT EXISTS %I ON semantic_cache_entries USING hnsw ((embedding::vector(%s)) vector_cosine_ops) WHERE vector_dims(embedding) = %s',
    'semantic_cache_entries_hnsw_' || dims, dims, dims);
END
$fn$;
`;

/**
 * Migration 16: the index the semantic cache's sweeper reads expired rows through (`expires_at` alone: the
 * `(filter_key, expires_at)` index of migration 14 serves only lookups of one filter key), made only where the
 * table exists (no pgvector, no table); idempotent, also run by the semantic cache's start when it creates the
 * table itself (`response-cache/semantic/index.ts`).
 */
export const SEMANTIC_CACHE_EXPIRY_INDEX_SQL = `
DO $$
BEGIN
  IF to_regclass('semantic_cache_entries') IS NOT NULL THEN
    CREATE INDEX IF NOT EXISTS semantic_cache_entries_expires_idx ON semantic_cache_entries (expires_at);
  END IF;
END
$$;
`;

export const migrations: readonly Migration[] = [
  {
    id: 1,
    name: "users-keys-spend-logs",
    sql: `
CREATE TABLE users (
  user_id          text PRIMARY KEY,
  user_email       text,
  user_role        text NOT NULL DEFAULT 'internal_user',
  max_budget       numeric CHECK (max_budget >= 0),
  budget_duration  text,
  budget_reset_at  timestamptz,
  spend            numeric NOT NULL DEFAULT 0,
  tpm_limit        bigint CHECK (tpm_limit >= 0),
  rpm_limit        bigint CHECK (rpm_limit >= 0),
  metadata         jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE keys (
  token            text PRIMARY KEY CHECK (token ~ '^[0-9a-f]{64}$'),
  key_name         text NOT NULL,
  key_alias        text,
  user_id          text REFERENCES users (user_id),
  models           text[] NOT NULL DEFAULT '{}',
  max_budget       numeric CHECK (max_budget >= 0),
  budget_duration  text,
  budget_reset_at  timestamptz,
  spend            numeric NOT NULL DEFAULT 0,
  tpm_limit        bigint CHECK (tpm_limit >= 0),
  rpm_limit        bigint CHECK (rpm_limit >= 0),
  metadata         jsonb NOT NULL DEFAULT '{}'::jsonb,
  expires          timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  revoked_at       timestamptz
);
CREATE INDEX keys_user_id_idx ON keys (user_id, created_at DESC);
CREATE INDEX keys_alias_idx ON keys (key_alias) WHERE key_alias IS NOT NULL;

CREATE TABLE spend_logs (
  request_id         text PRIMARY KEY,
  api_key            text,
  key_alias          text,
  user_id            text,
  model_group        text NOT NULL,
  model              text NOT NULL,
  deployment_id      text,
  prompt_tokens      integer NOT NULL DEFAULT 0,
  completion_tokens  integer NOT NULL DEFAULT 0,
  total_tokens       integer NOT NULL DEFAULT 0,
  spend              numeric NOT NULL DEFAULT 0,
  start_time         timestamptz NOT NULL,
  end_time           timestamptz NOT NULL,
  status             integer NOT NULL,
  stream             boolean NOT NULL DEFAULT false,
  created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX spend_logs_api_key_time_idx ON spend_logs (api_key, start_time DESC);
CREATE INDEX spend_logs_user_time_idx ON spend_logs (user_id, start_time DESC);
CREATE INDEX spend_logs_time_idx ON spend_logs (start_time DESC);
`,
  },
  {
    id: 2,
    name: "audit-log",
    sql: `
CREATE TABLE audit_log (
  id               bigserial PRIMARY KEY,
  created_at       timestamptz NOT NULL DEFAULT now(),
  actor            text NOT NULL,
  via              text NOT NULL,
  action           text NOT NULL,
  key_alias        text,
  key_hash_prefix  text,
  user_id          text,
  before           jsonb,
  after            jsonb,
  request_id       text,
  source_ip        text
);
CREATE INDEX audit_log_time_idx ON audit_log (created_at DESC, id DESC);
CREATE INDEX audit_log_actor_idx ON audit_log (actor, created_at DESC);
CREATE INDEX audit_log_user_idx ON audit_log (user_id, created_at DESC) WHERE user_id IS NOT NULL;
CREATE INDEX audit_log_key_idx ON audit_log (key_hash_prefix, created_at DESC) WHERE key_hash_prefix IS NOT NULL;

-- Append-only: rows are never changed; only the retention job deletes rows past the retention period.
CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only';
END $$;
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
  FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
  FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();
`,
  },
  {
    id: 3,
    name: "budget-events-outbox",
    // One row per (budget, period, threshold): the "sent" mark and the webhook outbox at once. Writers insert
    // with ON CONFLICT DO NOTHING, so several instances and concurrent calls produce exactly one row.
    sql: `
CREATE TABLE budget_events (
  scope            text NOT NULL CHECK (scope IN ('key', 'user', 'team')),
  scope_id         text NOT NULL,
  period_start     timestamptz NOT NULL,
  threshold        numeric NOT NULL CHECK (threshold > 0),
  payload          jsonb NOT NULL,
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  delivered_at     timestamptz,
  last_error       text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (scope, scope_id, period_start, threshold)
);
CREATE INDEX budget_events_due_idx ON budget_events (next_attempt_at) WHERE delivered_at IS NULL;
`,
  },
  {
    id: 4,
    name: "spend-logs-call-type",
    // LiteLLM's `call_type` per spend row (acompletion, aresponses, aembedding, atext_completion,
    // anthropic_messages); rows written before the other endpoints existed were all chat completions.
    sql: `ALTER TABLE spend_logs ADD COLUMN call_type text NOT NULL DEFAULT 'acompletion';`,
  },
  {
    id: 5,
    name: "audit-log-delete-guard",
    // Migration 2 refused UPDATE and TRUNCATE; DELETE stayed open for the retention job, so the gateway's role
    // (the tables' owner; triggers bind the owner too, on PGlite as well) could erase any row. Now each row
    // carries the database's time of its insertion (`recorded_at`, set by the database whatever the insert
    // says; rows already there get the migration's time), and a DELETE of a row recorded less than 30 days ago
    // is refused (the floor, AUDIT_MIN_RETENTION_DAYS in audit/query.ts): only the retention job's deletion of
    // rows past AUDIT_LOG_RETENTION_DAYS (at least 30) passes.
    sql: `
ALTER TABLE audit_log ADD COLUMN recorded_at timestamptz NOT NULL DEFAULT now();
CREATE FUNCTION audit_log_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.recorded_at := now();
  RETURN NEW;
END $$;
CREATE TRIGGER audit_log_stamp BEFORE INSERT ON audit_log
  FOR EACH ROW EXECUTE FUNCTION audit_log_stamp();
CREATE FUNCTION audit_log_retention_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.recorded_at < now() - interval '30 days' THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'audit_log is append-only: a row recorded less than 30 days ago cannot be deleted (row %)', OLD.id
    USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
  FOR EACH ROW EXECUTE FUNCTION audit_log_retention_only();
`,
  },
  {
    id: 6,
    name: "response-owners",
    // Who created each Responses-API response the gateway relayed from a native upstream, and which deployment
    // holds it (response-owners/store.ts): key hash (null for the master key), user, team (reserved), kept
    // until expires_at (the upstream's 30-day retention), then swept.
    sql: `
CREATE TABLE response_owners (
  response_id    text PRIMARY KEY,
  key_hash       text,
  user_id        text,
  team_id        text,
  deployment_id  text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  expires_at     timestamptz NOT NULL
);
CREATE INDEX response_owners_expires_idx ON response_owners (expires_at);
`,
  },
  {
    id: 7,
    name: "spend-logs-usage-details",
    // How a call's tokens divide by price (usage/types.ts, UsageBreakdown: input, cache_read,
    // cache_write_5m, cache_write_1h, output, output_reasoning, …); NULL when the upstream reported no usage.
    sql: `ALTER TABLE spend_logs ADD COLUMN usage_details jsonb;`,
  },
  {
    id: 8,
    name: "keys-object-permission",
    // LiteLLM's object_permission of a key, the MCP part (auth/types.ts ObjectPermission): {mcp_servers: [...],
    // mcp_tool_permissions: {<server>: [tools]}}; NULL: no MCP server but those open to all keys.
    sql: `ALTER TABLE keys ADD COLUMN object_permission jsonb;`,
  },
  {
    id: 9,
    name: "max-parallel-requests",
    // LiteLLM's `max_parallel_requests` of a key or user: calls in flight at once on all instances together
    // (limits/parallel.ts); NULL = unlimited.
    sql: `
ALTER TABLE keys ADD COLUMN max_parallel_requests bigint CHECK (max_parallel_requests >= 0);
ALTER TABLE users ADD COLUMN max_parallel_requests bigint CHECK (max_parallel_requests >= 0);
`,
  },
  {
    id: 10,
    name: "teams",
    // LiteLLM's teams (litellm/proxy/_types.py `LiteLLM_TeamTable`, `LiteLLM_TeamMembership`): a budget and rate
    // limits shared by the team's keys, the models its keys may call, and memberships (role admin | user) each
    // with an optional budget in the team (`max_budget_in_team`, kept in the membership's `max_budget`; its
    // period follows the team's `budget_duration`). `member_key` is the membership's one-column id (JSON
    // [team_id, user_id]) for the spend writer and the limit counters. Keys, spend rows and audit rows name
    // their team; `keys.team_id` has no foreign key so that a deleted team's revoked keys keep its id.
    // `keys.blocked`: LiteLLM's /key/block (refused until /key/unblock; unlike revocation, not final).
    sql: `
CREATE TABLE teams (
  team_id          text PRIMARY KEY,
  team_alias       text,
  models           text[] NOT NULL DEFAULT '{}',
  max_budget       numeric CHECK (max_budget >= 0),
  budget_duration  text,
  budget_reset_at  timestamptz,
  spend            numeric NOT NULL DEFAULT 0,
  tpm_limit        bigint CHECK (tpm_limit >= 0),
  rpm_limit        bigint CHECK (rpm_limit >= 0),
  max_parallel_requests bigint CHECK (max_parallel_requests >= 0),
  metadata         jsonb NOT NULL DEFAULT '{}'::jsonb,
  blocked          boolean NOT NULL DEFAULT false,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE team_memberships (
  member_key       text PRIMARY KEY,
  team_id          text NOT NULL REFERENCES teams (team_id) ON DELETE CASCADE,
  user_id          text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
  role             text NOT NULL CHECK (role IN ('admin', 'user')),
  max_budget       numeric CHECK (max_budget >= 0),
  budget_duration  text,
  budget_reset_at  timestamptz,
  spend            numeric NOT NULL DEFAULT 0,
  tpm_limit        bigint CHECK (tpm_limit >= 0),
  rpm_limit        bigint CHECK (rpm_limit >= 0),
  max_parallel_requests bigint CHECK (max_parallel_requests >= 0),
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  UNIQUE (team_id, user_id)
);
CREATE INDEX team_memberships_user_idx ON team_memberships (user_id);

ALTER TABLE keys ADD COLUMN team_id text;
ALTER TABLE keys ADD COLUMN blocked boolean NOT NULL DEFAULT false;
-- /user/delete revokes the user's keys and deletes the user: the revoked keys stay, without an owner.
ALTER TABLE keys DROP CONSTRAINT keys_user_id_fkey;
ALTER TABLE keys ADD CONSTRAINT keys_user_id_fkey FOREIGN KEY (user_id) REFERENCES users (user_id) ON DELETE SET NULL;
CREATE INDEX keys_team_id_idx ON keys (team_id, created_at DESC) WHERE team_id IS NOT NULL;
ALTER TABLE spend_logs ADD COLUMN team_id text;
CREATE INDEX spend_logs_team_time_idx ON spend_logs (team_id, start_time DESC) WHERE team_id IS NOT NULL;
ALTER TABLE audit_log ADD COLUMN team_id text;
`,
  },
  {
    id: 11,
    name: "teams-object-permission",
    // LiteLLM's object_permission of a team, the MCP part (auth/types.ts ObjectPermission), like the keys' (id 8):
    // the team's MCP grants, which its keys inherit or are narrowed by (mcp/permissions.ts); NULL: none.
    sql: `ALTER TABLE teams ADD COLUMN object_permission jsonb;`,
  },
  {
    id: 12,
    name: "spend_logs_cache_hit",
    // The response cache (response-cache/): LiteLLM's spend log columns `cache_hit` and `cache_key`, and what a
    // hit saved (USD, the cost of the call that was stored; 0 for other rows), for the usage views.
    sql: `
ALTER TABLE spend_logs ADD COLUMN cache_hit boolean NOT NULL DEFAULT false;
ALTER TABLE spend_logs ADD COLUMN cache_key text;
ALTER TABLE spend_logs ADD COLUMN cache_saved_spend numeric NOT NULL DEFAULT 0;
`,
  },
  {
    id: 13,
    name: "spend-logs-reason",
    // Why a call failed or was refused (LiteLLM logs failed calls too, their error in the row's metadata): the
    // OpenAI error type (`budget_exceeded`, `rate_limit_error`, `upstream_error`, …) or the gateway's finer name
    // where that type is generic (`guardrail_violation`, `key_model_access_denied`); NULL for an answered call.
    // A refused call's row has spend 0 and no deployment (pipeline/steps/account.ts, logRefusal).
    sql: `ALTER TABLE spend_logs ADD COLUMN reason text;`,
  },
  {
    id: 14,
    name: "semantic_cache_entries",
    // The semantic response cache (response-cache/semantic/): one row per stored answer with the embedding of its
    // prompt (pgvector's `vector`, any dimension: the embedding model decides). Created only where the `vector`
    // extension is available (the embedded PGlite loads it; a Postgres server needs pgvector installed): on a
    // server without it this migration creates nothing, and `postgres-semantic` stops the start saying so.
    sql: SEMANTIC_CACHE_TABLE_SQL,
  },
  {
    id: 15,
    name: "semantic_cache_hnsw_index",
    // An ANN index for the semantic cache (pgvector's HNSW, cosine distance). HNSW needs a fixed dimension and
    // the table's column has none (the embedding model decides), so this adds the function the store calls for
    // each dimension it writes (response-cache/semantic/store-pg.ts): it creates one partial index on
    // `embedding::vector(<dims>)` over the rows of that dimension. The function's SQL is dynamic: it is created
    // on a server without pgvector too, and only called where the table exists.
    sql: SEMANTIC_CACHE_INDEX_FUNCTION_SQL,
  },
  {
    id: 16,
    name: "semantic_cache_expiry_index",
    // The semantic cache's sweeper (response-cache/semantic/sweeper.ts) deletes expired rows of every filter key
    // in bounded batches, oldest first: it reads them through this index on `expires_at`. Nothing where the
    // table does not exist (a server without pgvector).
    sql: SEMANTIC_CACHE_EXPIRY_INDEX_SQL,
  },
];
