/**
 * @platform/admin-api against the real gateway: each request schema accepts and refuses the same bodies as
 * the gateway's admin routes (a drift between the two fails here), the client's responses parse, and its
 * failures are typed (unreachable, refused master key, the gateway's own 4xx, a response of the wrong shape).
 */
import {
  AdminApiClient,
  AdminApiError,
  checkRequest,
  generateKeyRequest,
  newUserRequest,
  updateUserRequest,
} from "@platform/admin-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { type FakeUpstream, startFakeUpstream } from "../../fixtures/openai-upstream.js";
import { deployment, MASTER_KEY, startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { createTestDatabase, type TestDatabase } from "../../helpers/postgres.js";
import { deleteKeys, REDIS_URL, uniquePrefix } from "../../helpers/redis.js";

let upstream: FakeUpstream;
let db: TestDatabase;
let gateway: TestGateway;
let client: AdminApiClient;
const prefix = uniquePrefix("admin-api");

beforeAll(async () => {
  upstream = await startFakeUpstream();
  db = await createTestDatabase();
  gateway = await startTestGateway(
    `model_list:\n${deployment("general", upstream.url)}`,
    { DATABASE_URL: db.url, REDIS_URL },
    {
      limits: { keyPrefix: prefix },
    },
  );
  client = new AdminApiClient({ baseUrl: gateway.url, masterKey: MASTER_KEY });
  await client.newUser({ user_id: "contract-user", max_budget: 50, rpm_limit: 100 });
});
afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  await db?.drop();
  await deleteKeys(prefix);
});

async function gatewayAccepts(path: string, body: unknown): Promise<{ status: number; param: unknown }> {
  const res = await fetch(`${gateway.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${MASTER_KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { error?: { param?: unknown } };
  return { status: res.status, param: json.error?.param ?? null };
}

/** Bodies only schema validation decides on (no state involved: the user exists, no alias clashes). */
const CASES: Array<[string, z.ZodType, Record<string, unknown>]> = [
  [
    "/key/generate",
    generateKeyRequest,
    { user_id: "contract-user", key_alias: "a1", max_budget: 5, duration: "30d" },
  ],
  [
    "/key/generate",
    generateKeyRequest,
    { user_id: "contract-user", budget_duration: "1mo", rpm_limit: 0, models: ["general"] },
  ],
  ["/key/generate", generateKeyRequest, { user_id: "contract-user", max_budget: null, tpm_limit: null }],
  ["/key/generate", generateKeyRequest, { max_budget: -1 }],
  ["/key/generate", generateKeyRequest, { duration: "forever" }],
  ["/key/generate", generateKeyRequest, { rpm_limit: 1.5 }],
  ["/key/generate", generateKeyRequest, { key: "sk-my-own-key" }],
  ["/key/generate", generateKeyRequest, { key_alias: "" }],
  ["/key/generate", generateKeyRequest, { models: ["ok", ""] }],
  [
    "/user/new",
    newUserRequest,
    { user_id: "contract-2", user_role: "internal_user", budget_duration: "30d" },
  ],
  ["/user/new", newUserRequest, { user_role: "superuser" }],
  ["/user/new", newUserRequest, { tpm_limit: "10" }],
  ["/user/update", updateUserRequest, { user_id: "contract-user", max_budget: 60 }],
  ["/user/update", updateUserRequest, { max_budget: 60 }],
  ["/user/update", updateUserRequest, { user_id: "contract-user", budget_duration: "3x" }],
];

describe("request schemas match the gateway's validation", () => {
  it.each(CASES.map(([path, schema, body], i) => ({ i, path, schema, body })))(
    "case $i: $path $body",
    async ({ path, schema, body }) => {
      const local = checkRequest(schema, body);
      const remote = await gatewayAccepts(path, body);
      if (local.ok) {
        expect(remote.status, JSON.stringify(remote)).toBe(200);
      } else {
        expect(remote.status).toBe(400);
        expect(remote.param).toBe(local.param);
      }
    },
  );
});

describe("the typed client", () => {
  it("parses the gateway's responses: generate, info, list, usage, user info, models", async () => {
    const created = await client.generateKey({ user_id: "contract-user", key_alias: "typed" });
    expect(created.key).toMatch(/^sk-/);
    expect((await client.keyInfo(created.token)).info.key_alias).toBe("typed");
    const list = await client.listKeys({ user_id: "contract-user", return_full_object: true });
    expect(list.keys.some((k) => typeof k !== "string" && k.token === created.token)).toBe(true);
    expect((await client.usage({ user_id: "contract-user", days: 7 })).daily).toHaveLength(7);
    expect((await client.userInfo("contract-user")).user_info.max_budget).toBe(60);
    expect((await client.models()).data.map((m) => m.id)).toContain("general");
    expect((await client.deleteKeys({ keys: [created.token] })).deleted_keys).toEqual([created.token]);
  });

  it("types its failures", async () => {
    const wrongKey = new AdminApiClient({ baseUrl: gateway.url, masterKey: "sk-not-the-master-key" });
    await expect(wrongKey.listUsers()).rejects.toMatchObject({ kind: "unauthorized", status: 401 });
    const unknown = await client.keyInfo("0".repeat(64)).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(AdminApiError);
    expect(unknown).toMatchObject({
      kind: "http",
      status: 404,
      body: { error: { type: "not_found_error" } },
    });
    const down = new AdminApiClient({ baseUrl: "http://127.0.0.1:1", masterKey: MASTER_KEY });
    await expect(down.listUsers()).rejects.toMatchObject({ kind: "unreachable", status: 0 });
    const wrongShape = new AdminApiClient({
      baseUrl: gateway.url,
      masterKey: MASTER_KEY,
      fetch: async () => new Response(JSON.stringify({ users: "nope" }), { status: 200 }),
    });
    await expect(wrongShape.listUsers()).rejects.toMatchObject({ kind: "invalid_response" });
    // The master key is never part of an error message.
    const messages = [unknown, await down.listUsers().catch((e: Error) => e)].map(
      (e) => (e as Error).message,
    );
    for (const message of messages) expect(message).not.toContain(MASTER_KEY);
  });
});
