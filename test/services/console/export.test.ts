/**
 * Spend export against a real gateway: the Usage tab's and the Admin view's "Download CSV" give the period's
 * requests as CSV (the same period as on screen, bounded), scoped to the user (or every user for an
 * administrator), with cells a spreadsheet cannot run as formulas.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
      "time,request_id,user_id,user_email,model,key_alias,key_hash,prompt_tokens,completion_tokens,total_tokens,spend_usd,status",
    );
    expect(lines.slice(1).every((l) => l.split(",")[3] === "alice@example.com")).toBe(true);
    expect(lines).toHaveLength(3);
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
