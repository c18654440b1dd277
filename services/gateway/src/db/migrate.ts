/**
 * Applies {@link migrations} at start-up. Safe when several gateway instances start at once: every runner
 * takes the same session-level `pg_advisory_lock` (waiting, not failing, while another instance migrates),
 * then applies only the migrations not yet recorded in `gateway_migrations`, each in its own transaction.
 * (node-pg-migrate's lock is `pg_try_advisory_lock`, which makes the second instance fail instead of wait.)
 */
import type { FastifyBaseLogger } from "fastify";
import type pg from "pg";
import { migrations as gatewayMigrations, type Migration } from "./migrations.js";

/** Advisory lock id of the gateway's migrations (arbitrary, fixed: "gate" in ASCII). */
const MIGRATION_LOCK_ID = 0x67_61_74_65;

/**
 * Brings the schema up to date.
 * @returns the ids applied by this call (empty when another instance or an earlier start applied them).
 * @throws the database error of a failing migration (that migration is rolled back; earlier ones stay).
 */
export async function migrate(
  pool: pg.Pool,
  log: FastifyBaseLogger,
  migrations: readonly Migration[] = gatewayMigrations,
): Promise<number[]> {
  const client = await pool.connect();
  const applied: number[] = [];
  // A lost connection also emits `error` on the checked-out client; the failing query reports it.
  const ignore = () => undefined;
  client.on("error", ignore);
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_ID]);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS gateway_migrations (
        id integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
      const done = await client.query<{ id: number }>("SELECT id FROM gateway_migrations");
      const doneIds = new Set(done.rows.map((r) => r.id));
      for (const migration of [...migrations].sort((a, b) => a.id - b.id)) {
        if (doneIds.has(migration.id)) continue;
        await client.query("BEGIN");
        try {
          await client.query(migration.sql);
          await client.query("INSERT INTO gateway_migrations (id, name) VALUES ($1, $2)", [
            migration.id,
            migration.name,
          ]);
          await client.query("COMMIT");
        } catch (error) {
          await client.query("ROLLBACK").catch(() => undefined);
          throw error;
        }
        applied.push(migration.id);
        log.info({ migration: migration.id, name: migration.name }, "database migration applied");
      }
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_ID]).catch(() => undefined);
    }
  } finally {
    // Destroy rather than pool the connection: whatever happened above, the session lock goes with it.
    client.off("error", ignore);
    client.release(true);
  }
  return applied;
}

/**
 * Raised at start-up with GATEWAY_RUN_MIGRATIONS=false when the database lacks migrations this gateway needs:
 * the rollout's migration run (the kubernetes target's `gateway-migrate` Job) has not applied them (yet).
 */
export class MigrationsPendingError extends Error {
  override name = "MigrationsPendingError";
  constructor(readonly pending: readonly number[]) {
    super(
      `the database lacks migration(s) ${pending.join(", ")} and GATEWAY_RUN_MIGRATIONS=false: ` +
        "run the rollout's migrations first (kubernetes: the gateway-migrate Job) or set GATEWAY_RUN_MIGRATIONS=true",
    );
  }
}

/**
 * The ids of `migrations` not recorded in `gateway_migrations` (all of them when the table does not exist),
 * ascending. Reads only; takes no lock.
 */
export async function pendingMigrations(
  pool: pg.Pool,
  migrations: readonly Migration[] = gatewayMigrations,
): Promise<number[]> {
  const table = await pool.query<{ t: string | null }>("SELECT to_regclass('gateway_migrations')::text AS t");
  const done =
    table.rows[0]?.t == null
      ? new Set<number>()
      : new Set(
          (await pool.query<{ id: number }>("SELECT id FROM gateway_migrations")).rows.map((r) => r.id),
        );
  return migrations
    .map((m) => m.id)
    .filter((id) => !done.has(id))
    .sort((a, b) => a - b);
}
