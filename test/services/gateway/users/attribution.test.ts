/**
 * Chat usage attribution with a real gateway, Postgres and Redis: the chat's service key (CHAT_SERVICE_KEY,
 * ensured at start-up) names the chat user in `x-librechat-user-id`, and the call is booked on that user
 * (provisioned with the DEFAULT_* limits, spend rows and `/user/info`, the user's budget enforced, the metric
 * `user` label, the trace's user); the same headers from any other key are ignored; bad header values are
 * refused with 400.
 */
import { createHash } from "node:crypto";
import OpenAI from "openai";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeLangfuse, startFakeLangfuse } from "../../../fixtures/langfuse.js";
import { type FakeUpstream, startFakeUpstream } from "../../../fixtures/openai-upstream.js";
import {
  adminCall,
  deployment,
  MASTER_KEY,
  startTestGateway,
  type TestGateway,
} from "../../../helpers/gateway.js";
import { createTestDatabase, type TestDatabase } from "../../../helpers/postgres.js";
import { deleteKeys, REDIS_URL, uniquePrefix } from "../../../helpers/redis.js";
import { langfuseEnv } from "../../../helpers/traced-gateway.js";

/** 48 characters after sk-, as the stack generates it. */
const SERVICE_KEY = "sk-chatservice0123456789abcdefghijklmnopqrstuvwxyzAB";
// USD per token, so that a $0.01 budget is used up after a few calls.
const priced = "      input_cost_per_token: 0.0001\n      output_cost_per_token: 0.0002\n";
const DEFAULTS = {
  DEFAULT_USER_BUDGET: "0.01",
  DEFAULT_BUDGET_DURATION: "30d",
  DEFAULT_TPM_LIMIT: "5000",
  DEFAULT_RPM_LIMIT: "100",
};

let upstream: FakeUpstream;
let langfuse: FakeLangfuse;
let db: TestDatabase;
let prefix: string;
let gw: TestGateway;

async function start(env: Record<string, string> = {}): Promise<TestGateway> {
  return startTestGateway(
    `model_list:\n${deployment("general", upstream.url, priced)}`,
    { DATABASE_URL: db.url, REDIS_URL, CHAT_SERVICE_KEY: SERVICE_KEY, ...DEFAULTS, ...env },
    { store: { flushIntervalMs: 100 }, limits: { keyPrefix: prefix } },
  );
}

/** An admin API call to the suite's gateway with the master key. */
const admin = <T = Record<string, unknown>>(method: "GET" | "POST", path: string, body?: unknown) =>
  adminCall<T>(gw, method, path, body);

/** A chat call as the chat makes it: its key, and the user headers LibreChat fills in. */
function chat(key: string, headers: Record<string, string>, content = "hi") {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    body: JSON.stringify({ model: "general", messages: [{ role: "user", content }], max_tokens: 20 }),
  });
}

const chatUser = (id: string) => ({
  "x-session-id": "conversation-1",
  "x-librechat-user-id": id,
  "x-librechat-user-email": `${id}@example.com`,
});

async function keyRows(): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return (await client.query("SELECT * FROM keys ORDER BY created_at")).rows;
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  upstream = await startFakeUpstream({ record: false });
  langfuse = await startFakeLangfuse();
  db = await createTestDatabase();
  prefix = uniquePrefix("attribution");
  gw = await start({
    CONSOLE_PUBLIC_URL: "https://console.example.com/",
    ...langfuseEnv(langfuse),
  });
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  await langfuse?.close();
  await db?.drop();
  await deleteKeys(prefix);
});

describe("the chat's service key", () => {
  it("is ensured at start-up, hash only, alias chat-service, no expiry, allowed to name users; idempotent across restarts", async () => {
    const hash = createHash("sha256").update(SERVICE_KEY).digest("hex");
    const check = async () => {
      const rows = await keyRows();
      const service = rows.filter((r) => r.key_alias === "chat-service");
      expect(service).toHaveLength(1);
      expect(service[0]).toMatchObject({
        token: hash,
        user_id: null,
        expires: null,
        revoked_at: null,
        max_budget: null,
        metadata: { service: "chat", user_headers: true },
      });
      expect(JSON.stringify(rows)).not.toContain(SERVICE_KEY);
      return service[0]?.created_at;
    };
    const createdAt = await check();
    // A second instance starting on the same database, then a restart: still one key, the same row.
    const second = await start();
    await second.close();
    expect(await check()).toEqual(createdAt);
  });

  it("books a chat call on the named user: provisioned with the defaults and the email, spend log and /user/info", async () => {
    const res = await chat(SERVICE_KEY, chatUser("665f1c2a9b1e8a0012345678"));
    expect(res.status).toBe(200);
    const traceId = res.headers.get("x-trace-id") as string;
    const user = await admin<{ user_info: Record<string, unknown> }>(
      "GET",
      "/user/info?user_id=665f1c2a9b1e8a0012345678",
    );
    expect(user.status).toBe(200);
    expect(user.body.user_info).toMatchObject({
      user_email: "665f1c2a9b1e8a0012345678@example.com",
      user_role: "internal_user",
      max_budget: 0.01,
      budget_duration: "30d",
      tpm_limit: 5000,
      rpm_limit: 100,
    });
    await expect
      .poll(
        async () =>
          (
            await admin<Array<{ user: string | null; key_alias: string | null; spend: number }>>(
              "GET",
              "/spend/logs?user_id=665f1c2a9b1e8a0012345678",
            )
          ).body,
      )
      .toEqual([expect.objectContaining({ user: "665f1c2a9b1e8a0012345678", key_alias: "chat-service" })]);
    await expect
      .poll(
        async () =>
          (
            await admin<{ user_info: { spend: number } }>(
              "GET",
              "/user/info?user_id=665f1c2a9b1e8a0012345678",
            )
          ).body.user_info.spend,
      )
      .toBeGreaterThan(0);
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(
      /litellm_proxy_total_requests_metric_total\{[^}]*user="665f1c2a9b1e8a0012345678"/,
    );
    const observations = await langfuse.waitForTrace(traceId, 2, 10_000);
    const root = observations.find((o) => o.parentObservationId === null);
    expect(root?.userId).toBe("665f1c2a9b1e8a0012345678");
  });

  it("keeps the user as provisioned on later calls (an existing user is never changed)", async () => {
    expect((await chat(SERVICE_KEY, chatUser("returning-user"))).status).toBe(200);
    const updated = await admin("POST", "/user/update", { user_id: "returning-user", max_budget: 5 });
    expect(updated.status).toBe(200);
    const again = await chat(SERVICE_KEY, {
      "x-librechat-user-id": "returning-user",
      "x-librechat-user-email": "changed@example.com",
    });
    expect(again.status).toBe(200);
    const user = await admin<{ user_info: { max_budget: number; user_email: string } }>(
      "GET",
      "/user/info?user_id=returning-user",
    );
    expect(user.body.user_info).toMatchObject({ max_budget: 5, user_email: "returning-user@example.com" });
    // A budget lowered through the admin API applies to the next chat call (the change message reaches the cache).
    await admin("POST", "/user/update", { user_id: "returning-user", max_budget: 0 });
    const refused = await chat(SERVICE_KEY, chatUser("returning-user"));
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { type: string } }).error.type).toBe("budget_exceeded");
  });

  it("refuses the user's calls with 429 budget_exceeded naming the user's budget once it is used up", async () => {
    const statuses: number[] = [];
    let refusal: { error: { type: string; message: string } } | undefined;
    for (let i = 0; i < 40 && refusal === undefined; i += 1) {
      const res = await chat(SERVICE_KEY, chatUser("spender"), "spend some of my budget please");
      statuses.push(res.status);
      if (res.status === 429) refusal = (await res.json()) as typeof refusal;
      else await res.arrayBuffer();
    }
    expect(statuses[0]).toBe(200);
    expect(refusal?.error.type).toBe("budget_exceeded");
    expect(refusal?.error.message).toContain('User budget ("spender@example.com"): $0.01');
    // Another chat user on the same service key is not affected.
    expect((await chat(SERVICE_KEY, chatUser("bystander"))).status).toBe(200);
  });

  it("works through the official openai client with the headers LibreChat sends (defaultHeaders)", async () => {
    const client = new OpenAI({
      baseURL: `${gw.url}/v1`,
      apiKey: SERVICE_KEY,
      maxRetries: 0,
      defaultHeaders: chatUser("sdk-user"),
    });
    const done = await client.chat.completions.create({
      model: "general",
      messages: [{ role: "user", content: "hello" }],
      max_tokens: 20,
      stream: true,
    });
    for await (const _chunk of done) {
      // drain
    }
    const user = await admin("GET", "/user/info?user_id=sdk-user");
    expect(user.status).toBe(200);
    // Without max_tokens the reservation (the default output cap at the model's price) exceeds the new user's
    // $0.01 budget: the user's budget applies from the first call, and caps the answer at what it can pay for.
    const capped = await client.chat.completions
      .create({ model: "general", messages: [{ role: "user", content: "hello" }] })
      .withResponse();
    const header = capped.response.headers.get("x-gateway-output-cap") ?? "";
    expect(header).toMatch(/^\d+; reason=budget$/);
    expect(Number.parseInt(header, 10)).toBeLessThan(4096);
  });
});

describe("user headers from other keys", () => {
  it("are ignored: the call is booked on the key's own user and no user is provisioned", async () => {
    expect((await admin("POST", "/user/new", { user_id: "key-owner" })).status).toBe(200);
    const made = await admin<{ key: string }>("POST", "/key/generate", { user_id: "key-owner" });
    const res = await chat(made.body.key, chatUser("impersonated"));
    expect(res.status).toBe(200);
    await expect
      .poll(async () => (await admin<unknown[]>("GET", "/spend/logs?user_id=key-owner")).body.length)
      .toBe(1);
    expect((await admin("GET", "/user/info?user_id=impersonated")).status).toBe(404);
    expect((await admin<unknown[]>("GET", "/spend/logs?user_id=impersonated")).body).toEqual([]);
  });

  it("are ignored for the master key too", async () => {
    const res = await chat(MASTER_KEY, chatUser("named-by-master"));
    expect(res.status).toBe(200);
    expect((await admin("GET", "/user/info?user_id=named-by-master")).status).toBe(404);
  });

  it("metadata.user_headers must be a boolean (only the master key can set it)", async () => {
    const res = await admin<{ error: { param: string } }>("POST", "/key/generate", {
      metadata: { user_headers: "yes" },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe("metadata.user_headers");
  });
});

describe("bad user headers with the service key", () => {
  it.each([
    ["missing user id", "x-librechat-user-id", { "x-librechat-user-email": "a@example.com" }],
    ["unfilled placeholder", "x-librechat-user-id", { "x-librechat-user-id": "{{LIBRECHAT_USER_ID}}" }],
    ["too long", "x-librechat-user-id", { "x-librechat-user-id": "u".repeat(257) }],
    ["a tab", "x-librechat-user-id", { "x-librechat-user-id": "a\tb" }],
    [
      "email too long",
      "x-librechat-user-email",
      { "x-librechat-user-id": "ok", "x-librechat-user-email": "e".repeat(321) },
    ],
  ])("%s → 400 naming %s", async (_what, header, headers) => {
    const res = await chat(SERVICE_KEY, headers as Record<string, string>);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { type: string; param: string; message: string } };
    expect(body.error).toMatchObject({ type: "invalid_request_error", param: header });
    expect(body.error.message).toContain(header);
  });

  it("a NUL character → 400 naming the header (sent past the HTTP client's own check)", async () => {
    const res = await gw.gateway.app.inject({
      method: "POST",
      url: "/v1/chat/completions",
      headers: {
        authorization: `Bearer ${SERVICE_KEY}`,
        "content-type": "application/json",
        "x-librechat-user-id": "a\u0000b",
      },
      payload: { model: "general", messages: [{ role: "user", content: "hi" }] },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.param).toBe("x-librechat-user-id");
  });

  it("an unfilled email placeholder is no email (the call goes through)", async () => {
    const res = await chat(SERVICE_KEY, {
      "x-librechat-user-id": "no-email-user",
      "x-librechat-user-email": "{{LIBRECHAT_USER_EMAIL}}",
    });
    expect(res.status).toBe(200);
    const user = await admin<{ user_info: { user_email: string | null } }>(
      "GET",
      "/user/info?user_id=no-email-user",
    );
    expect(user.body.user_info.user_email).toBeNull();
  });
});

describe("GET /ui", () => {
  it("redirects to the console's admin sign-in without a key", async () => {
    const res = await fetch(`${gw.url}/ui`, { redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("https://console.example.com/admin/login");
  });

  it("says how to configure the console when CONSOLE_PUBLIC_URL is not set", async () => {
    const bare = await startTestGateway(`model_list:\n${deployment("general", upstream.url)}`);
    try {
      const res = await fetch(`${bare.url}/ui`, { redirect: "manual" });
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toContain("text/plain");
      expect(await res.text()).toContain("Set CONSOLE_PUBLIC_URL");
    } finally {
      await bare.close();
    }
  });
});

// Last: it revokes the service key of the suite's database.
describe("a revoked service key", () => {
  it("is refused, and stays revoked across a restart (the ensure never undoes an operator's revocation)", async () => {
    const deleted = await admin("POST", "/key/delete", { keys: [SERVICE_KEY] });
    expect(deleted.status).toBe(200);
    await expect
      .poll(async () => (await chat(SERVICE_KEY, chatUser("after-revocation"))).status, { timeout: 3000 })
      .toBe(401);
    const restarted = await start();
    try {
      const rows = await keyRows();
      const service = rows.filter((r) => r.key_alias === "chat-service");
      expect(service).toHaveLength(1);
      expect(service[0]?.revoked_at).not.toBeNull();
      const res = await fetch(`${restarted.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${SERVICE_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "general", messages: [{ role: "user", content: "hi" }] }),
      });
      expect(res.status).toBe(401);
    } finally {
      await restarted.close();
    }
  });
});
