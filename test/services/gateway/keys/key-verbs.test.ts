/**
 * LiteLLM's /key/regenerate, /key/block and /key/unblock with two gateway instances sharing Postgres and Redis:
 * a regenerated key keeps its record (alias, limits, spend) under a new secret and the old secret is refused on
 * the other instance, which had it cached; a blocked key is refused on both instances until unblocked; every
 * change is audited; revoked keys cannot be blocked or regenerated.
 */
import { generateKeyResponse, keyInfoResponse } from "@platform/admin-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeUpstream, startFakeUpstream } from "../../../fixtures/openai-upstream.js";
import { adminCall, deployment, startTestGateway, type TestGateway } from "../../../helpers/gateway.js";
import { createTestDatabase, type TestDatabase } from "../../../helpers/postgres.js";
import { deleteKeys, REDIS_URL, uniquePrefix, waitFor } from "../../../helpers/redis.js";

let upstream: FakeUpstream;
let db: TestDatabase;
let prefix: string;
let a: TestGateway;
let b: TestGateway;

const start = () =>
  startTestGateway(
    `model_list:\n${deployment("general", upstream.url)}`,
    { DATABASE_URL: db.url, REDIS_URL },
    { store: { flushIntervalMs: 50 }, limits: { keyPrefix: prefix } },
  );

/** GET /v1/models with `key` on `gw`: the status and the error code, if any. */
async function models(gw: TestGateway, key: string): Promise<{ status: number; code: string | undefined }> {
  const res = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
  const body = (await res.json()) as { error?: { code?: string } };
  return { status: res.status, code: body.error?.code };
}

beforeAll(async () => {
  upstream = await startFakeUpstream({ record: false });
  db = await createTestDatabase();
  prefix = uniquePrefix("key-verbs");
  a = await start();
  b = await start();
});

afterAll(async () => {
  await a?.close();
  await b?.close();
  await upstream?.close();
  await db?.drop();
  await deleteKeys(prefix);
});

describe("/key/regenerate", () => {
  it("gives the same record a new secret; the old one is refused on the instance that had it cached", async () => {
    const made = await adminCall<{ key: string; token: string }>(a, "POST", "/key/generate", {
      key_alias: "svc",
      max_budget: 3,
    });
    const old = made.body.key;
    expect((await models(b, old)).status).toBe(200); // cached on b

    const res = await adminCall(a, "POST", "/key/regenerate", { key: old });
    expect(res.status).toBe(200);
    const fresh = generateKeyResponse.omit({ duration: true }).parse(res.body);
    expect(fresh.key).not.toBe(old);
    expect(fresh.token).not.toBe(made.body.token);
    expect(fresh).toMatchObject({ key_alias: "svc", max_budget: 3, status: "active" });

    await waitFor("b to refuse the old secret", async () => (await models(b, old)).status === 401, 2000);
    expect((await models(a, old)).status).toBe(401);
    expect((await models(b, fresh.key)).status).toBe(200);
    const info = await adminCall(a, "GET", `/key/info?key=${fresh.token}`);
    expect(keyInfoResponse.parse(info.body).info.key_alias).toBe("svc");
    expect((await adminCall(a, "GET", `/key/info?key=${made.body.token}`)).status).toBe(404);
    expect((await adminCall(a, "POST", "/key/regenerate", { key: old })).status).toBe(404);
  });
});

describe("/key/block, /key/unblock", () => {
  it("refuses a blocked key on every instance (401 key_blocked) until it is unblocked", async () => {
    const { body } = await adminCall<{ key: string; token: string }>(a, "POST", "/key/generate", {});
    expect((await models(b, body.key)).status).toBe(200);
    const blocked = await adminCall<{ blocked: boolean }>(a, "POST", "/key/block", { key: body.token });
    expect(blocked.status).toBe(200);
    expect(blocked.body.blocked).toBe(true);
    await waitFor(
      "b to refuse the blocked key",
      async () => (await models(b, body.key)).status === 401,
      2000,
    );
    expect(await models(b, body.key)).toEqual({ status: 401, code: "key_blocked" });
    expect(await models(a, body.key)).toEqual({ status: 401, code: "key_blocked" });

    const unblocked = await adminCall<{ blocked: boolean }>(a, "POST", "/key/unblock", { key: body.key });
    expect(unblocked.body.blocked).toBe(false);
    await waitFor(
      "b to serve the unblocked key",
      async () => (await models(b, body.key)).status === 200,
      2000,
    );

    await adminCall(a, "POST", "/key/delete", { keys: [body.token] });
    const revoked = await adminCall<{ error: { param: string } }>(a, "POST", "/key/block", {
      key: body.token,
    });
    expect(revoked.status).toBe(400);
    expect(revoked.body.error.param).toBe("key");
    expect((await adminCall(a, "POST", "/key/regenerate", { key: body.token })).status).toBe(400);
  });

  it("audits regenerate, block and unblock", async () => {
    const { body } = await adminCall<{ logs: { action: string }[] }>(a, "GET", "/audit/logs?page_size=100");
    const actions = body.logs.map((l) => l.action);
    for (const action of ["key.regenerate", "key.block", "key.unblock"]) expect(actions).toContain(action);
  });
});
