/**
 * The spend writer thread's entry (a `node:worker_threads` worker started by {@link SpendWriterThread}): it opens
 * its own Postgres pool on the gateway's DATABASE_URL and writes the batches the main thread sends with
 * {@link writeSpendBatch}, so that building the statement's parameters, node-postgres's serialising and reading
 * the answers happen off the gateway's event loop.
 *
 * Protocol (see `thread-protocol.ts`): a batch comes as one or more `rows` messages of the same id, then one
 * `write` message; the answer is one `written` (new log rows) or `failed` (the database error's message and
 * SQLSTATE `code`, so the main thread can tell an outage from rows the database refuses). Pool warnings are sent
 * up as `log` messages (no row contents). `close` ends the pool; the thread then exits.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { FastifyBaseLogger } from "fastify";
import { createPool } from "../db/pool.js";
import type { FromMain, SpendThreadSettings, ToMain } from "./thread-protocol.js";
import type { SpendLogRow } from "./types.js";
import { writeSpendBatch } from "./write.js";

const port = parentPort;
if (port === null) throw new Error("spend/write-thread.ts runs as a worker thread only");
const settings = workerData as SpendThreadSettings;
const send = (message: ToMain) => port.postMessage(message);

/** Forwards the pool's warnings to the main thread's logger. */
const warn = (fields: object, msg: string) => send({ type: "log", fields, msg });
const log = {
  warn,
  error: warn,
  info: () => undefined,
  debug: () => undefined,
} as unknown as FastifyBaseLogger;

const pool = createPool(settings.databaseUrl, log, { max: 1 });
const parts = new Map<number, SpendLogRow[]>();
send({ type: "ready" });

port.on("message", (message: FromMain) => {
  if (message.type === "rows") {
    const rows = parts.get(message.id);
    if (rows === undefined) parts.set(message.id, message.rows);
    else for (const row of message.rows) rows.push(row);
    return;
  }
  if (message.type === "close") {
    void pool.end().finally(() => port.close());
    return;
  }
  const rows = parts.get(message.id) ?? [];
  parts.delete(message.id);
  writeSpendBatch(pool, rows, message.now).then(
    (inserted) => send({ type: "written", id: message.id, inserted }),
    (error: unknown) => {
      const code = (error as { code?: unknown } | null)?.code;
      send({
        type: "failed",
        id: message.id,
        message: error instanceof Error ? error.message : String(error),
        ...(typeof code === "string" ? { code } : {}),
      });
    },
  );
});
