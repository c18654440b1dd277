/**
 * How the rehearsal's checks reach the running stack: the published ports and the generated credentials the
 * program declared (read off the declarations, never typed in), the gateway's OpenAI and LiteLLM admin API
 * with them, and SQL in the relational database's container as its own user.
 */
import type Docker from "dockerode";
import type { DockerEngine } from "../../images/engine.js";
import type { DeclaredContainer, StackDescription } from "../declared.js";
import { OPERATOR_MODEL } from "../operator.js";

/** The running stack as a check sees it. */
export interface StackAccess {
  engine: DockerEngine;
  docker: Docker;
  stack: StackDescription;
  log: (line: string) => void;
}

/**
 * The declared container `name`.
 * @throws Error when the program declares no such container.
 */
export function declared(stack: StackDescription, name: string): DeclaredContainer {
  const c = stack.containers.find((x) => x.name === name);
  if (!c) throw new Error(`the program declares no container ${name}`);
  return c;
}

/** A container's declared environment as a record (`KEY=value` entries split at the first `=`). */
export function envOf(c: DeclaredContainer): Record<string, string> {
  return Object.fromEntries(c.env.map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]));
}

/**
 * `http://<host ip>:<host port>` of the first port `name` publishes.
 * @throws Error when it publishes none.
 */
export function publishedUrl(stack: StackDescription, name: string): string {
  const port = declared(stack, name).ports[0];
  if (!port) throw new Error(`${name} publishes no host port`);
  const ip = port.ip === "0.0.0.0" ? "127.0.0.1" : port.ip;
  return `http://${ip}:${port.external}`;
}

/** The gateway's URL on the host and the master key the program generated for it. */
export function gatewayOf(stack: StackDescription): { url: string; masterKey: string } {
  const masterKey = envOf(declared(stack, "gateway")).GATEWAY_MASTER_KEY;
  if (!masterKey) throw new Error("the gateway is declared without GATEWAY_MASTER_KEY");
  return { url: publishedUrl(stack, "gateway"), masterKey };
}

/**
 * Makes a virtual key with the master key (LiteLLM's `POST /key/generate`); `fields` adds its other fields
 * (`object_permission`, limits).
 * @returns the key (`sk-…`).
 * @throws Error with the gateway's answer when it makes none.
 */
export async function makeKey(
  stack: StackDescription,
  alias: string,
  fields: Record<string, unknown> = {},
): Promise<string> {
  const { url, masterKey } = gatewayOf(stack);
  const r = await fetch(`${url}/key/generate`, {
    method: "POST",
    headers: { authorization: `Bearer ${masterKey}`, "content-type": "application/json" },
    body: JSON.stringify({ ...fields, key_alias: alias }),
    signal: AbortSignal.timeout(30_000),
  });
  const body = (await r.json().catch(() => ({}))) as { key?: string };
  if (!r.ok || !body.key) throw new Error(`POST /key/generate answered ${r.status}: ${JSON.stringify(body)}`);
  return body.key;
}

/**
 * One chat completion of the operator's model with `key` (OpenAI's `POST /v1/chat/completions`).
 * @returns the HTTP status, or 0 when no answer came (connection refused, 30 s timeout).
 */
export async function chatStatus(stack: StackDescription, key: string): Promise<number> {
  try {
    const r = await fetch(`${gatewayOf(stack).url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: OPERATOR_MODEL.name,
        messages: [{ role: "user", content: "Say hello." }],
        max_tokens: 8,
      }),
      signal: AbortSignal.timeout(30_000),
    });
    await r.arrayBuffer();
    return r.status;
  } catch {
    return 0;
  }
}

/**
 * Runs `query` with psql inside relational-db as the declared POSTGRES_USER on POSTGRES_DB (the gateway's
 * database).
 * @returns psql's unaligned, tuples-only output, trimmed.
 * @throws Error with psql's output when it fails.
 */
export function sql(access: StackAccess, query: string): string {
  const env = envOf(declared(access.stack, "relational-db"));
  const r = access.engine.docker([
    "exec",
    "relational-db",
    "psql",
    "-v",
    "ON_ERROR_STOP=1",
    "-tA",
    "-U",
    env.POSTGRES_USER ?? "postgres",
    "-d",
    env.POSTGRES_DB ?? env.POSTGRES_USER ?? "postgres",
    "-c",
    query,
  ]);
  if (r.status !== 0) throw new Error(`psql in relational-db failed (${query}):\n${r.stderr}${r.stdout}`);
  return r.stdout.trim();
}

/**
 * Spend rows (`spend_logs`) of calls answered 200 with the key with alias `alias`, and that key's booked spend
 * (USD, as text).
 */
export function spendOf(access: StackAccess, alias: string): { rows: number; keySpend: string } {
  const quoted = `'${alias.replaceAll("'", "''")}'`;
  const rows = Number(
    sql(access, `SELECT count(*) FROM spend_logs WHERE key_alias = ${quoted} AND status = 200`),
  );
  const keySpend = sql(access, `SELECT coalesce(sum(spend), 0)::text FROM keys WHERE key_alias = ${quoted}`);
  return { rows, keySpend };
}
