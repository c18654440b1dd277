/**
 * A gateway in process for `/mcp` tests, with an SDK-made MCP server upstream (`mcp-server.ts`) and, unless
 * `database: false`, its own Postgres database and Redis key space (virtual keys, limits). Callers connect with
 * the SDK's client; everything is closed by `close()`. {@link useMcpTestGateway} starts one for a test file (or a
 * `describe` block) and closes it after.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, expect } from "vitest";
import type { GatewayOptions } from "../../services/gateway/src/gateway.js";
import { adminCall, startTestGateway, type TestGateway } from "./gateway.js";
import { mcpClient, startMcpServer, type TestMcpServer } from "./mcp-server.js";
import { createTestDatabase, type TestDatabase } from "./postgres.js";
import { deleteKeys, REDIS_URL, uniquePrefix } from "./redis.js";

/** The header a caller sends its key in: `Authorization`, or LiteLLM's `x-litellm-api-key`. */
export type KeyHeader = "authorization" | "x-litellm-api-key";

export interface McpTestGateway {
  gw: TestGateway;
  /** The SDK-made upstream server (`startMcpServer`). */
  upstream: TestMcpServer;
  /** The gateway's Postgres database (undefined with `database: false`). */
  db: TestDatabase | undefined;
  /** The SDK's client on the gateway's `/mcp` with `key` as its bearer token (closed by `close()`). */
  connect(key: string, header?: KeyHeader): Promise<Client>;
  /**
   * A new virtual key made with the master key (`body`: `/key/generate`'s fields): its `key`, `token` (the
   * hash spend rows carry) and `object_permission` as the gateway answered them.
   */
  newKey(body?: Record<string, unknown>): Promise<{ key: string; token: string; object_permission: unknown }>;
  close(): Promise<void>;
}

/** How the gateway under test is started. */
export interface McpTestOptions {
  /** Names the Redis key space. */
  name: string;
  /** More gateway environment. */
  env?: Record<string, string>;
  /** `false`: no Postgres and Redis (the master key only). */
  database?: boolean;
  /** A guardrail policy (YAML, docs/guardrails.md) written to a file the gateway reads (`GUARDRAIL_POLICY`). */
  policy?: string;
  /** The gateway's logger (e.g. `captureLogger()`). */
  logger?: GatewayOptions["logger"];
}

/** Writes `policy` to a fresh temporary file; its path. */
function policyFile(policy: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "gw-mcp-policy-")), "policy.yaml");
  writeFileSync(path, policy);
  return path;
}

/**
 * Starts the upstream and the gateway.
 * @param config the gateway's config file, given the upstream's URL.
 */
export async function startMcpTestGateway(
  config: (upstreamUrl: string) => string,
  options: McpTestOptions,
): Promise<McpTestGateway> {
  const upstream = await startMcpServer();
  const prefix = uniquePrefix(options.name);
  const db: TestDatabase | undefined = options.database === false ? undefined : await createTestDatabase();
  const stores: Record<string, string> =
    db === undefined ? {} : { DATABASE_URL: db.url, REDIS_URL, GATEWAY_REDIS_KEY_PREFIX: prefix };
  const guardrails: Record<string, string> = {};
  if (options.policy !== undefined) {
    // The PII guardrail runs in process, not against a Presidio service.
    delete process.env.PII_ANALYZER_API_BASE;
    guardrails.GUARDRAIL_POLICY = policyFile(options.policy);
  }
  const gw = await startTestGateway(
    config(upstream.url),
    { ...stores, ...guardrails, ...options.env },
    options.logger === undefined ? {} : { logger: options.logger },
  );
  const clients: Client[] = [];
  return {
    gw,
    upstream,
    db,
    async connect(key, header = "authorization") {
      const client = await mcpClient(gw.url, { [header]: `Bearer ${key}` });
      clients.push(client);
      return client;
    },
    async newKey(body = {}) {
      const res = await adminCall<{ key: string; token: string; object_permission: unknown }>(
        gw,
        "POST",
        "/key/generate",
        body,
      );
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

/**
 * Starts an MCP test gateway before the tests of the file (or of the `describe` block it is called in) and
 * closes it after them. The returned handle's members may be used only inside tests (and hooks after it).
 * @throws Error from a member used before the gateway started.
 */
export function useMcpTestGateway(
  config: (upstreamUrl: string) => string,
  options: McpTestOptions,
): McpTestGateway {
  let started: McpTestGateway | undefined;
  beforeAll(async () => {
    started = await startMcpTestGateway(config, options);
  }, 30_000);
  afterAll(async () => {
    await started?.close();
  });
  const now = (): McpTestGateway => {
    if (started === undefined) throw new Error(`the MCP test gateway ${options.name} has not started`);
    return started;
  };
  return {
    get gw() {
      return now().gw;
    },
    get upstream() {
      return now().upstream;
    },
    get db() {
      return now().db;
    },
    connect: (key, header) => now().connect(key, header),
    newKey: (body) => now().newKey(body),
    close: () => now().close(),
  };
}

/** The JSON-RPC error (`McpError`) `call` rejects with; fails the test when it resolves or rejects otherwise. */
export async function mcpError(call: Promise<unknown>): Promise<McpError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}
