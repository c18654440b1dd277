/**
 * Spend export against a real gateway: the Usage tab's and the Admin view's "Download CSV" give the period's
 * requests as CSV (the same period as on screen, bounded), scoped to the user (or every user for an
 * administrator), with cells a spreadsheet cannot run as formulas.
 */

import type { SpendLog } from "@platform/admin-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { csvLines } from "../../../services/console/server/routes/export.js";
import { type ConsoleStack, chatVisitor, startConsoleStack, type Visitor } from "../../helpers/console.js";
import { waitFor } from "../../helpers/redis.js";

let stack: ConsoleStack;
let admin: Visitor;
let alice: Visitor;
let bob: Visitor;

beforeAll(async () => {
  stack = await startConsoleStack();
  admin = (await chatVisitor(stack, "admin@example.com")).visitor;
  let aliceId: string;
  ({ visitor: alice, userId: aliceId } = await chatVisitor(stack, "alice@example.com"));
  bob = (await chatVisitor(stack, "bob@example.com")).visitor;
  const key = await stack.admin.generateKey({ user_id: aliceId, key_alias: "=HYPERLINK(1)" });
  const client = stack.gateway.clientWith(key.key);
  for (const model of ["general", "fast"]) {
    await client.chat.completions.create({ model, messages: [{ role: "user", content: "export me" }] });
  }
  await waitFor("spend booked", async () => {
    const usage = await stack.admin.usage({ user_id: aliceId, days: 7 });
    return usage.totals.requests === 2;
  });
});
afterAll(async () => {
  await stack?.close();
});

const rows = (csv: string) => csv.trimEnd().split("\r\n");

describe("last used", () => {
  it("lists when each key was last used (from the booked spend rows), null for a key never used", async () => {
    const unused = await alice.request("POST", "/api/keys", { body: { name: "unused" } });
    expect(unused.status).toBe(201);
    const list = await alice.request<{ keys: Array<{ key_alias: string; last_used_at: string | null }> }>(
      "GET",
      "/api/keys",
    );
    const used = list.body.keys.find((k) => k.key_alias === "=HYPERLINK(1)");
    expect(Date.now() - Date.parse(String(used?.last_used_at))).toBeLessThan(60_000);
    expect(list.body.keys.find((k) => k.key_alias === "unused")?.last_used_at).toBeNull();
  });
});

describe("spend export", () => {
  it("downloads the user's requests of the period as CSV, formula-safe", async () => {
    const res = await alice.request("GET", "/api/usage/export.csv?days=7");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/csv/);
    expect(res.headers.get("content-disposition")).toMatch(
      /^attachment; filename="usage-7d-\d{4}-\d{2}-\d{2}\.csv"$/,
    );
    const lines = rows(res.text);
    expect(lines[0]).toBe(
      "time,request_id,user_id,user_email,model,key_alias,key_hash,team_id,prompt_tokens,completion_tokens,total_tokens,cached_tokens,cache_write_tokens,reasoning_tokens,spend_usd,status,reason",
    );
    expect(lines.slice(1).every((l) => l.split(",")[3] === "alice@example.com")).toBe(true);
    expect(lines).toHaveLength(3);
    // Answered calls: status 200, an empty reason.
    expect(lines.slice(1).every((l) => l.endsWith(",200,"))).toBe(true);
    expect(
      lines
        .map((l) => l.split(",")[4])
        .slice(1)
        .sort(),
    ).toEqual(["fast", "general"]);
    expect(lines[1]).toContain(`"'=HYPERLINK(1)"`);
    expect(res.headers.get("x-export-truncated")).toBe("false");
  });

  it("scopes to the signed-in user and checks the period", async () => {
    expect(rows((await bob.request("GET", "/api/usage/export.csv?days=30")).text)).toHaveLength(1);
    const bad = await alice.request("GET", "/api/usage/export.csv?days=5");
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { param: "days" } });
  });

  it("gives administrators every user's requests; others get 403", async () => {
    const res = await admin.request("GET", "/api/admin/spend/export.csv?days=30");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-disposition")).toMatch(/filename="platform-spend-30d-/);
    expect(rows(res.text)).toHaveLength(3);
    expect((await alice.request("GET", "/api/admin/spend/export.csv?days=30")).status).toBe(403);
  });
});

describe("csvLines", () => {
  const row: SpendLog = {
    request_id: "r1",
    api_key: "abc",
    key_alias: "ci",
    user: "u1",
    team_id: "search",
    call_type: "acompletion",
    model_group: "claude",
    model: "anthropic/claude-sonnet-4-5",
    model_id: "d1",
    prompt_tokens: 1200,
    completion_tokens: 300,
    total_tokens: 1500,
    spend: 0.0042,
    startTime: "2026-11-27T10:00:00.000Z",
    endTime: "2026-11-27T10:00:01.000Z",
    status: 200,
    stream: false,
    usage_details: {
      input: 100,
      input_audio: 0,
      cache_read: 1000,
      cache_write_5m: 60,
      cache_write_1h: 40,
      output: 300,
      output_reasoning: 120,
      output_audio: 0,
      accepted_prediction: 0,
      rejected_prediction: 0,
      web_search_requests: 0,
    },
  };
  /** A CSV line's cells by column name (none of these cells needs quoting). */
  const byName = (header: string, line: string) => {
    const values = line.trim().split(",");
    return Object.fromEntries(
      header
        .trim()
        .split(",")
        .map((name, i) => [name, values[i]]),
    );
  };

  it("gives the team and the token breakdown (cache reads, cache writes, reasoning) of each request", () => {
    const [header, line] = [...csvLines([row], new Map([["u1", "u1@example.com"]]))];
    expect(byName(header!, line!)).toMatchObject({
      team_id: "search",
      user_email: "u1@example.com",
      cached_tokens: "1000",
      cache_write_tokens: "100",
      reasoning_tokens: "120",
      prompt_tokens: "1200",
    });
  });

  it("leaves the breakdown empty for a request billed from estimates (no usage reported) and the team for a key of none", () => {
    const [header, line] = [...csvLines([{ ...row, usage_details: null, team_id: null }], new Map())];
    expect(byName(header!, line!)).toMatchObject({
      team_id: "",
      cached_tokens: "",
      cache_write_tokens: "",
      reasoning_tokens: "",
    });
  });
});
