/**
 * Refused calls in the console, in Chromium against a real gateway with a PII guardrail (issue 34, defect 4): a
 * budget refusal, a rpm refusal and a guardrail block each show on Usage's requests with their reason, in the
 * CSV's `reason` column, and in Profile's count of refused calls; none of them adds to the spend shown.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { type BrowserConsole, skipReason, useBrowserConsole } from "../../helpers/console-browser.js";
import { waitFor } from "../../helpers/redis.js";
import { CARD } from "../gateway/guardrails/helpers.js";

const POLICY = "guardrails:\n  pii:\n    mode: enforce\n    entities: {CREDIT_CARD: BLOCK}\n";

let ctx: BrowserConsole;
let page: Page;
let spendBefore: number;

/** One chat call with `key`; its HTTP status. */
async function chat(key: string, content = "hi"): Promise<number> {
  const res = await fetch(`${ctx.stack.gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "general", messages: [{ role: "user", content }], max_tokens: 20 }),
  });
  await res.arrayBuffer();
  return res.status;
}

describe.skipIf(skipReason !== undefined)(`refused calls on Usage and Profile ${skipReason ?? ""}`, () => {
  const options = () => {
    const policy = join(mkdtempSync(join(tmpdir(), "console-refusals-")), "policy.yaml");
    writeFileSync(policy, POLICY);
    delete process.env.PII_ANALYZER_API_BASE;
    return { gatewayEnv: { GUARDRAIL_POLICY: policy } };
  };
  ctx = useBrowserConsole("rosa@example.com", options, async () => {
    page = ctx.page;
    await page.goto(`${ctx.stack.url}/profile`); // provisions the user
    await page.locator("h1").first().waitFor();
    const admin = ctx.stack.admin;
    const hasty = await admin.generateKey({ user_id: ctx.userId, key_alias: "hasty", rpm_limit: 1 });
    const broke = await admin.generateKey({ user_id: ctx.userId, key_alias: "broke", max_budget: 0.0001 });
    expect(await chat(hasty.key)).toBe(200);
    expect(await chat(hasty.key)).toBe(429);
    expect(await chat(broke.key)).toBe(429);
    const open = await admin.generateKey({ user_id: ctx.userId, key_alias: "open" });
    expect(await chat(open.key, `Charge ${CARD} please`)).toBe(400);
    await waitFor("four calls logged", async () => {
      return (await admin.usage({ user_id: ctx.userId, days: 7 })).totals.requests === 4;
    });
    spendBefore = (await admin.usage({ user_id: ctx.userId, days: 7 })).totals.spend;
  });

  it("Usage lists each refusal with its reason and counts them apart; spend is the answered call's", async () => {
    await page.goto(`${ctx.stack.url}/usage`);
    await page.getByTestId("requests-stat").waitFor();
    await expect(page.getByTestId("requests-stat").textContent()).resolves.toContain(
      "1 answered · 3 refused · 0 failed",
    );
    await page.getByTestId("recent-requests").waitFor();
    const table = (await page.getByTestId("recent-requests").textContent()) ?? "";
    expect(table).toContain("Refused (429): budget");
    expect(table).toContain("Refused (429): rate limit");
    expect(table).toContain("Refused (400): guardrail");
    const { totals, recent } = await ctx.stack.admin.usage({ user_id: ctx.userId, days: 7 });
    expect(totals.spend).toBe(spendBefore);
    const answered = recent.filter((r) => r.status === 200);
    expect(answered).toHaveLength(1);
    expect(totals.spend).toBe(answered[0]?.spend);
    expect(recent.filter((r) => r.status !== 200).every((r) => r.spend === 0)).toBe(true);
  }, 60_000);

  it("the CSV has a reason column naming each refusal", async () => {
    const csv = await page.evaluate(async () => (await fetch("/api/usage/export.csv?days=7")).text());
    const [header, ...lines] = csv.trimEnd().split("\r\n");
    const columns = (header ?? "").split(",");
    const reason = columns.indexOf("reason");
    const status = columns.indexOf("status");
    expect(reason).toBeGreaterThan(-1);
    const pairs = lines.map((line) => {
      const cells = line.split(",");
      return `${cells[status]} ${cells[reason]}`;
    });
    expect(pairs.sort()).toEqual(
      ["200 ", "400 guardrail_violation", "429 budget_exceeded", "429 rate_limit_error"].sort(),
    );
  }, 60_000);

  it("Profile counts the refused calls of the last 7 days, with their reasons", async () => {
    await page.goto(`${ctx.stack.url}/profile`);
    const refused = page.getByTestId("refused-calls");
    await refused.waitFor();
    const text = (await refused.textContent()) ?? "";
    expect(text).toMatch(/^3 calls refused in these 7 days: /);
    expect(text).toContain("budget 1");
    expect(text).toContain("rate limit 1");
    expect(text).toContain("guardrail 1");
  }, 60_000);
});
