/**
 * A gateway in process for `/mcp` tests, with an SDK-made MCP server upstream (`mcp-server.ts`) and, unless
 * `database: false`, its own Postgres database and Redis key space (virtual keys, limits). Callers connect with
 * the SDK's client; everything is closed by `close()`.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { expect } from "vitest";
import { adminCall, startTestGateway, type TestGateway } from "./gateway.js";
import { mcpClient, startMcpServer, type TestMcpServer } from "./mcp-server.js";
import { createTestDatabase, type TestDatabase } from "./postgres.js";
import { deleteKeys, REDIS_URL, uniquePrefix } from "./redis.js";

export interface McpTestGateway {
  gw: TestGateway;
  /** The SDK-made upstream server (`startMcpServer`). */
  upstream: TestMcpServer;
  /** The SDK's client on the gateway's `/mcp` with `key` as its bearer token (closed by `close()`). */
  connect(key: string): Promise<Client>;
  /** A new virtual key made with the master key (`body`: `/key/generate`'s fields); its `key` and `token`. */
  newKey(body?: Record<string, unknown>): Promise<{ key: string; token: string }>;
  close(): Promise<void>;
}

/**
 * Starts the upstream and the gateway.
 * @param config the gateway's config file, given the upstream's URL.
 * @param options `name` names the Redis key space; `env` adds gateway environment; `database: false` runs
 *   without Postgres and Redis (master key only).
 */
export async function startMcpTestGateway(
  config: (upstreamUrl: string) => string,
  options: { name: string; env?: Record<string, string>; database?: boolean },
): Promise<McpTestGateway> {
  const upstream = await startMcpServer();
  const prefix = uniquePrefix(options.name);
  const db: TestDatabase | undefined = options.database === false ? undefined : await createTestDatabase();
  const stores: Record<string, string> =
    db === undefined ? {} : { DATABASE_URL: db.url, REDIS_URL, GATEWAY_REDIS_KEY_PREFIX: prefix };
  const gw = await startTestGateway(config(upstream.url), { ...stores, ...options.env });
  const clients: Client[] = [];
  return {
    gw,
    upstream,
    async connect(key) {
      const client = await mcpClient(gw.url, { authorization: `Bearer ${key}` });
      clients.push(client);
      return client;
    },
    async newKey(body = {}) {
      const res = await adminCall<{ key: string; token: string }>(gw, "POST", "/key/generate", body);
      expect(res.status).toBe(200);
      return res.body;
    },
    async close() {
      await Promise.all(clients.map((c) => c.close()));
      await gw.close();
      await upstream.close();
      if (db !== undefined) {
        await db.drop();
        await deleteKeys(prefix);
      }
    },
  };
}
