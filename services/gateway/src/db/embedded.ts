/**
 * The embedded database of a from-source run (`npm start` with no DATABASE_URL): PostgreSQL compiled to
 * WebAssembly (PGlite, `@electric-sql/pglite`) in this process, its files in one folder, served on a loopback
 * port through `@electric-sql/pglite-socket`, so that the gateway's own `pg` pool, migrations and queries run on
 * it unchanged.
 *
 * PGlite is a single-session database (https://pglite.dev/docs/pglite-socket): the socket server queues every
 * protocol message of every connection into that one session. Two connections busy at once would interleave the
 * messages of their queries (the extended protocol's Parse/Bind/Execute), so the gateway's pool gets one
 * connection ({@link EMBEDDED_POOL_MAX}); the server admits a few more only so that a connection the pool has
 * just destroyed may still be closing while its replacement connects. One process only: a lock file beside the
 * data folder (`<dataDir>.pid`) refuses a second gateway on the same folder.
 *
 * PGlite loads pgvector (`@electric-sql/pglite-pgvector`), so the semantic response cache works on it.
 *
 * PGlite is a development dependency of the gateway: the image leaves it out, and a stack always sets
 * DATABASE_URL.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/** Connections of the gateway's pool on the embedded database (see the module comment). */
export const EMBEDDED_POOL_MAX = 1;
/** Connections the socket server accepts at once: the pool's one, and room for ones still closing. */
const SERVER_MAX_CONNECTIONS = 4;

/** A running embedded database. */
export interface EmbeddedDatabase {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`: the loopback socket server (no password). */
  url: string;
  /** The data folder (absolute). */
  dataDir: string;
  /** Stops the socket server, closes PGlite (its files are then consistent) and removes the lock file. */
  close(): Promise<void>;
}

/** Raised when the embedded database cannot start; the message says what to do. */
export class EmbeddedDatabaseError extends Error {
  override name = "EmbeddedDatabaseError";
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
};

/**
 * Takes the data folder for this process: writes `<dataDir>.pid`, unless a live process other than
 * this one holds it (a stale file of a killed run is taken over).
 * @returns the release: removes the lock file.
 * @throws EmbeddedDatabaseError naming the other process.
 */
export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dirname(dataDir), { recursive: true });
  const lock = `${dataDir}.pid`;
  let holder: number | undefined;
  try {
    holder = Number.parseInt(readFileSync(lock, "utf8"), 10);
  } catch {
    holder = undefined;
  }
  if (holder !== undefined && holder !== process.pid && Number.isInteger(holder) && alive(holder)) {
    throw new EmbeddedDatabaseError(
      `the embedded database at ${dataDir} is in use by process ${holder} (another gateway); stop that one, ` +
        "or give this one its own folder (GATEWAY_EMBEDDED_DB) or a Postgres server (DATABASE_URL)",
    );
  }
  writeFileSync(lock, `${process.pid}\n`);
  return () => rmSync(lock, { force: true });
}

/**
 * Opens (or, on first use, creates) the PGlite database in `dataDir` and serves it on a free loopback port.
 * @throws EmbeddedDatabaseError when PGlite is not installed (`npm ci --omit=dev`), the folder is in use by
 *   another gateway, or PGlite cannot open the folder's files.
 */
export async function startEmbeddedDatabase(dataDir: string): Promise<EmbeddedDatabase> {
  const unlock = lockDataDir(dataDir);
  try {
    const [{ PGlite }, { PGLiteSocketServer }, { vector }] = await Promise.all([
      import("@electric-sql/pglite"),
      import("@electric-sql/pglite-socket"),
      import("@electric-sql/pglite-pgvector"),
    ]).catch((error: unknown) => {
      throw new EmbeddedDatabaseError(
        `the embedded database needs @electric-sql/pglite, a development dependency: run npm ci (without ` +
          `--omit=dev), or set DATABASE_URL. (${error instanceof Error ? error.message : String(error)})`,
      );
    });
    // pgvector, for the semantic response cache (its table is created where the extension is available).
    const db = await PGlite.create(dataDir, { extensions: { vector } }).catch((error: unknown) => {
      throw new EmbeddedDatabaseError(
        `PGlite cannot open ${dataDir}: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
    const server = new PGLiteSocketServer({
      db,
      host: "127.0.0.1",
      port: 0,
      maxConnections: SERVER_MAX_CONNECTIONS,
    });
    await server.start();
    return {
      url: `postgres://postgres@${server.getServerConn()}/postgres`,
      dataDir,
      async close() {
        await server.stop();
        await db.close();
        unlock();
      },
    };
  } catch (error) {
    unlock();
    throw error;
  }
}
