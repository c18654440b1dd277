/**
 * Many virtual keys for the distinct-keys scaling runs. `POST /key/generate` makes one key per call (a
 * transaction, an alias lock, an audit row), far too slow for 100,000 keys, so the keys are written straight into
 * the gateway's `keys` table as copies of a key the gateway made itself (same limits, models, budget, expiry), each
 * with a fresh key from the gateway's own generator and its SHA-256 from the gateway's own hashing
 * (services/gateway/src/keys/key-material.ts). The gateway then learns each key on its first use, as it would in
 * production; {@link warmKeys} makes that first use with one `GET /v1/models` per key.
 */
import pg from "pg";
import { Pool } from "undici";
import { generateKey, hashKey, keyDisplayName } from "../../services/gateway/src/keys/key-material.js";
import { completionBody } from "./load.js";

/** Columns the copies get new values for; every other column of `keys` is copied from the template row. */
const OWN_COLUMNS = new Set(["token", "key_name", "key_alias"]);

/**
 * Inserts `count` copies of the key whose plaintext is `templateKey` into `databaseUrl`'s `keys` table, in
 * batches of 10,000 rows.
 * @returns the plaintext keys (`sk-…`), in insertion order.
 * @throws when the template key is not in the table, or on a database error.
 */
export async function insertKeyCopies(
  databaseUrl: string,
  templateKey: string,
  count: number,
): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ column_name: string }>(
      "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'keys' ORDER BY ordinal_position",
    );
    const copied = rows.map((r) => r.column_name).filter((c) => !OWN_COLUMNS.has(c));
    const template = hashKey(templateKey);
    const found = await client.query("SELECT 1 FROM keys WHERE token = $1", [template]);
    if (found.rowCount !== 1) throw new Error("insertKeyCopies: the template key is not in the keys table");
    const quoted = copied.map((c) => `"${c.replaceAll('"', '""')}"`);
    const sql = `INSERT INTO keys (token, key_name, key_alias, ${quoted.join(", ")})
      SELECT n.token, n.name, NULL, ${quoted.map((c) => `t.${c}`).join(", ")}
      FROM unnest($1::text[], $2::text[]) AS n(token, name), keys t WHERE t.token = $3`;
    const keys: string[] = [];
    for (let done = 0; done < count; ) {
      const batch = Array.from({ length: Math.min(10_000, count - done) }, generateKey);
      await client.query(sql, [batch.map(hashKey), batch.map(keyDisplayName), template]);
      keys.push(...batch);
      done += batch.length;
    }
    return keys;
  } finally {
    await client.end();
  }
}

/**
 * One authenticated `GET /v1/models` per key, `concurrency` at a time, so that every key is in the gateway's key
 * cache. @throws when a key is refused (not 200).
 */
export async function warmKeys(origin: string, keys: string[], concurrency = 16): Promise<void> {
  const pool = new Pool(origin, { connections: concurrency, keepAliveTimeout: 60_000 });
  let next = 0;
  const worker = async () => {
    while (next < keys.length) {
      const key = keys[next++]!;
      const res = await pool.request({
        path: "/v1/models",
        method: "GET",
        headers: { authorization: `Bearer ${key}` },
      });
      const text = await res.body.text();
      if (res.statusCode !== 200)
        throw new Error(`GET /v1/models with a copied key answered ${res.statusCode}: ${text.slice(0, 200)}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    await pool.close();
  }
}

/**
 * The gateway's V8 heap in use, bytes: prom-client's default `nodejs_heap_size_used_bytes` on its `GET /metrics`
 * (one worker's when the gateway runs several). NaN when the metric is missing.
 */
export async function heapUsedBytes(origin: string): Promise<number> {
  const res = await fetch(`${origin}/metrics`);
  const text = await res.text();
  const match = /^nodejs_heap_size_used_bytes(?:\{[^}]*\})?\s+([0-9.eE+-]+)$/m.exec(text);
  return match === null ? Number.NaN : Number(match[1]);
}

/**
 * One chat call (`POST /v1/chat/completions`, model `bench`) per key, `concurrency` at a time: each key is then
 * in the gateway's key cache and has taken (and, a second later, returned) a lease.
 * @throws when a call is not answered 200.
 */
export async function chatOnce(origin: string, keys: string[], concurrency = 16): Promise<void> {
  const pool = new Pool(origin, { connections: concurrency, keepAliveTimeout: 60_000 });
  const body = completionBody("bench");
  let next = 0;
  const worker = async () => {
    while (next < keys.length) {
      const key = keys[next++]!;
      const res = await pool.request({
        path: "/v1/chat/completions",
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body,
      });
      const text = await res.body.text();
      if (res.statusCode !== 200)
        throw new Error(`warm-up call answered ${res.statusCode}: ${text.slice(0, 200)}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    await pool.close();
  }
}
