/**
 * The program of the kubernetes target's `gateway-migrate` Job: the gateway's migrations once per rollout, from
 * the gateway image, before the new replicas (which run with GATEWAY_RUN_MIGRATIONS=false) start.
 */

/**
 * The `node --input-type=module -e` program that runs the gateway's migrations once (the same `migrate()` with
 * its advisory lock the gateway runs at start) from `migrateModule` (the compiled `db/migrate.js`) and
 * DATABASE_URL; it prints `migrations applied: [ids]`. Bare imports (`pg`) resolve from the working directory.
 */
export function migrateScript(migrateModule: string): string {
  return [
    'const pg = (await import("pg")).default;',
    `const { migrate } = await import(${JSON.stringify(migrateModule)});`,
    "const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });",
    "const log = { info: (o, m) => console.log(m, JSON.stringify(o)) };",
    "const applied = await migrate(pool, log);",
    'console.log("migrations applied:", JSON.stringify(applied));',
    "await pool.end();",
  ].join(" ");
}

/** The migration Job's program in the gateway image (WORKDIR /app): the Job of each rollout runs it first. */
export const MIGRATE_SCRIPT = migrateScript("/app/services/gateway/dist/db/migrate.js");
