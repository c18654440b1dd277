/**
 * Refused and failed calls in the spend log, with a real gateway, Postgres and Redis: a call the gateway refuses
 * after authentication (a budget, a rpm limit, a guardrail, a model the key may not call) or that no upstream
 * answered gets a spend-log row of spend 0 with its status and `reason`; `/spend/usage` counts it as failed and
 * refused and per reason, and no spend total changes. A bad key writes nothing.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type SpendLog, spendLogsResponse, usageResponse } from "@platform/admin-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeUpstream, startFakeUpstream } from "../../../fixtures/openai-upstream.js";
import { adminCall, deployment, startTestGateway, type TestGateway } from "../../../helpers/gateway.js";
import { createTestDatabase, type TestDatabase } from "../../../helpers/postgres.js";
import { deleteKeys, REDIS_URL, uniquePrefix } from "../../../helpers/redis.js";
import { CARD } from "../guardrails/helpers.js";

const POLICY = `guardrails:
  pii:
    mode: enforce
    entities: {CREDIT_CARD: BLOCK}
`;
/** $0.0001 / $0.0002 per token: a call with max_tokens 40 reserves about $0.009. */
const priced = "      input_cost_per_token: 0.0001\n      output_cost_per_token: 0.0002\n";

/** Refusal rows a key may add per minute here (each other test refuses fewer calls of a key than this). */
const ROWS_PER_KEY = 5;

let upstream: FakeUpstream;
let db: TestDatabase;
let prefix: string;
let gw: TestGateway;

beforeAll(async () => {
  upstream = await startFakeUpstream({ record: false });
  db = await createTestDatabase();
  prefix = uniquePrefix("refusals");
  const policyPath = join(mkdtempSync(join(tmpdir(), "gw-refusals-")), "policy.yaml");
  writeFileSync(policyPath, POLICY);
  delete process.env.PII_ANALYZER_API_BASE;
  gw = await startTestGateway(
    `model_list:\n${deployment("general", upstream.url, priced)}${deployment("other", upstream.url, priced)}`,
    {
      DATABASE_URL: db.url,
      REDIS_URL,
      GUARDRAIL_POLICY: policyPath,
      GATEWAY_REFUSAL_ROWS_PER_KEY_PER_MINUTE: String(ROWS_PER_KEY),
    },
    { store: { flushIntervalMs: 50 }, limits: { keyPrefix: prefix } },
  );
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  await db?.drop();
  await deleteKeys(prefix);
});

/** A new user `body.user_id` and a virtual key of theirs, made with the master key. */
async function newKey(body: Record<string, unknown>): Promise<string> {
  expect((await adminCall(gw, "POST", "/user/new", { user_id: body.user_id })).status).toBe(200);
  const res = await adminCall<{ key: string }>(gw, "POST", "/key/generate", body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.key;
}

/** One chat call with `key`; its status. */
async function chat(key: string, content = "hi", model = "general"): Promise<number> {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content }], max_tokens: 40 }),
  });
  await res.arrayBuffer();
  return res.status;
}

/** The user's spend-log rows once `count` are written (the spend writer batches), newest first. */
async function logsOf(userId: string, count: number): Promise<SpendLog[]> {
  let rows: SpendLog[] = [];
  await expect
    .poll(async () => {
      const res = await adminCall<unknown>(gw, "GET", `/spend/logs?user_id=${userId}`);
      rows = spendLogsResponse.parse(res.body);
      return rows.length;
    })
    .toBe(count);
  return rows;
}

/** The user's spend (USD) as `/user/info` reports it. */
async function userSpend(userId: string): Promise<number> {
  const res = await adminCall<{ user_info: { spend: number } }>(gw, "GET", `/user/info?user_id=${userId}`);
  return res.body.user_info.spend;
}

describe("refused calls in the spend log", () => {
  it("a budget refusal is a row of spend 0, status 429, reason budget_exceeded; spend stays 0", async () => {
    const key = await newKey({ user_id: "broke", max_budget: 0.0001 });
    expect(await chat(key)).toBe(429);
    const [row] = await logsOf("broke", 1);
    expect(row).toMatchObject({
      status: 429,
      reason: "budget_exceeded",
      spend: 0,
      total_tokens: 0,
      model_group: "general",
      model: "",
      model_id: null,
      key_alias: null,
      call_type: "acompletion",
    });
    expect(await userSpend("broke")).toBe(0);
  });

  it("a rpm refusal is a row with reason rate_limit_error beside the answered call; totals keep the answered call's spend", async () => {
    const key = await newKey({ user_id: "hasty", rpm_limit: 1 });
    expect(await chat(key)).toBe(200);
    expect(await chat(key)).toBe(429);
    const rows = await logsOf("hasty", 2);
    const answered = rows.find((r) => r.status === 200);
    const refused = rows.find((r) => r.status === 429);
    expect(answered?.reason).toBeNull();
    expect(answered?.spend).toBeGreaterThan(0);
    expect(refused).toMatchObject({ reason: "rate_limit_error", spend: 0, total_tokens: 0 });
    await expect.poll(() => userSpend("hasty")).toBe(answered?.spend);

    const usage = await adminCall<unknown>(gw, "GET", "/spend/usage?user_id=hasty&days=1");
    const report = usageResponse.parse(usage.body);
    expect(report.totals).toMatchObject({
      spend: answered?.spend,
      requests: 2,
      failed_requests: 1,
      refused_requests: 1,
    });
    expect(report.by_reason).toEqual([{ reason: "rate_limit_error", refused: true, requests: 1 }]);
    expect(report.recent.map((r) => r.reason)).toEqual(rows.map((r) => r.reason));
  });

  it("a guardrail block is a row with reason guardrail_violation (status 400), not a generic bad request", async () => {
    const key = await newKey({ user_id: "careless" });
    expect(await chat(key, `Charge ${CARD} please`)).toBe(400);
    const [row] = await logsOf("careless", 1);
    expect(row).toMatchObject({ status: 400, reason: "guardrail_violation", spend: 0 });
    expect(await userSpend("careless")).toBe(0);
  });

  it("a model the key may not call is a 403 row with reason key_model_access_denied", async () => {
    const key = await newKey({ user_id: "narrow", models: ["general"] });
    expect(await chat(key, "hi", "other")).toBe(403);
    const [row] = await logsOf("narrow", 1);
    expect(row).toMatchObject({ status: 403, reason: "key_model_access_denied", model_group: "other" });
  });

  it("a call the upstream failed is a 5xx row with its reason: failed, not refused", async () => {
    const key = await newKey({ user_id: "unlucky" });
    upstream.failNext(10, 500);
    const status = await chat(key);
    upstream.clearFaults();
    expect(status).toBeGreaterThanOrEqual(500);
    const [row] = await logsOf("unlucky", 1);
    expect(row).toMatchObject({ status, reason: "upstream_error", spend: 0 });
    const usage = usageResponse.parse(
      (await adminCall<unknown>(gw, "GET", "/spend/usage?user_id=unlucky&days=1")).body,
    );
    expect(usage.totals).toMatchObject({ requests: 1, failed_requests: 1, refused_requests: 0 });
  });

  it("a bad key writes no row", async () => {
    const before = spendLogsResponse.parse((await adminCall(gw, "GET", "/spend/logs")).body).length;
    expect(await chat("sk-not-a-key-000000000000000000000000")).toBe(401);
    // A refused call of a known key after it, so that the writer has flushed whatever the bad key could add.
    const key = await newKey({ user_id: "witness", max_budget: 0.0001 });
    expect(await chat(key)).toBe(429);
    await logsOf("witness", 1);
    const after = spendLogsResponse.parse((await adminCall(gw, "GET", "/spend/logs")).body);
    expect(after).toHaveLength(before + 1);
  });

  it("a key that keeps calling past its limit adds at most GATEWAY_REFUSAL_ROWS_PER_KEY_PER_MINUTE refusal rows a minute; the rest are counted in a metric", async () => {
    const dropped = async () => {
      const text = await (await fetch(`${gw.url}/metrics`)).text();
      const line = text.split("\n").find((l) => l.startsWith("gateway_refusal_rows_dropped_total "));
      return Number(line?.split(" ")[1] ?? Number.NaN);
    };
    const before = await dropped();
    const key = await newKey({ user_id: "hammer", rpm_limit: 1 });
    expect(await chat(key)).toBe(200);
    const statuses = await Promise.all(Array.from({ length: 12 }, () => chat(key)));
    expect(statuses).toEqual(Array(12).fill(429));
    // Another key's refusals in the same minute are not held back by the first key's.
    const other = await newKey({ user_id: "bystander", max_budget: 0.0001 });
    expect(await chat(other)).toBe(429);
    await logsOf("bystander", 1);
    const rows = await logsOf("hammer", 1 + ROWS_PER_KEY);
    expect(rows.filter((r) => r.status === 429)).toHaveLength(ROWS_PER_KEY);
    expect(await dropped()).toBe(before + 12 - ROWS_PER_KEY);
    // The refused calls still count in the request metrics and still answer 429: only their rows are dropped.
  });
});
