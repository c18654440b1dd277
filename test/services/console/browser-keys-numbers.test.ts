/**
 * Issue 34's first three defects in Chromium against a real gateway (a chat administrator's console):
 *
 * 1. Numbers never change silently: a negative, sub-cent, zero, fractional or exponent value typed into a
 *    limit stays as typed and is refused under its field in the console's words, the server refuses the same
 *    body with the same words, and a limit looser than the account's is said without the admin API's names.
 * 2. The operator sees every key (of a user, of no user, the chat's service key) with its owner in "All keys"
 *    and can revoke any; platform spend counts every request (master-key and no-user calls too) and the admin
 *    CSV has the user of each row.
 * 3. A key's name, limits, models and expiry can be edited by its owner and by an operator, audited.
 */
import type { Locator, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { type BrowserConsole, skipReason, useBrowserConsole } from "../../helpers/console-browser.js";
import { MASTER_KEY } from "../../helpers/gateway.js";
import { waitFor } from "../../helpers/redis.js";

let ctx: BrowserConsole;
let page: Page;

/** The error text under the input labelled `label` in `scope`, or "" when it has none. */
async function errorUnder(scope: Locator, label: string): Promise<string> {
  const input = scope.getByLabel(label, { exact: true });
  const id = await input.getAttribute("aria-describedby");
  const ids = (id ?? "").split(" ").filter((i) => i.endsWith("-error"));
  if (ids.length === 0) return "";
  return ((await page.locator(`[id="${ids[0]}"]`).textContent()) ?? "").trim();
}

/** POSTs `body` to the console API from the page (its session and CSRF token): status and error message. */
async function postFromPage(path: string, body: unknown): Promise<{ status: number; message: string }> {
  return page.evaluate<{ status: number; message: string }>(`(async () => {
    const me = await (await fetch("/api/me")).json();
    const res = await fetch(${JSON.stringify(path)}, {
      method: "POST",
      headers: { "content-type": "application/json", "x-csrf-token": me.csrf_token },
      body: ${JSON.stringify(JSON.stringify(body))},
    });
    const json = await res.json();
    return { status: res.status, message: json.error ? json.error.message : "" };
  })()`);
}

describe.skipIf(skipReason !== undefined)(`issue 34, defects 1-3, in Chromium ${skipReason ?? ""}`, () => {
  ctx = useBrowserConsole("ops@example.com", {}, async () => {
    page = ctx.page;
    await page.goto(`${ctx.stack.url}/profile`); // provisions the user (budget $10, 60 rpm)
    await page.locator("h1").first().waitFor();
  });

  it("keeps every typed number as typed and refuses bad ones in the browser and the server alike", async () => {
    await page.goto(`${ctx.stack.url}/keys`);
    await page.getByRole("button", { name: "Generate key" }).click();
    const dialog = page.getByRole("dialog", { name: "Generate a key" });
    await dialog.getByLabel("Name").fill("numbers");
    const cases: Array<[string, string, RegExp, Record<string, unknown>]> = [
      ["Budget (USD, optional)", "-5", /cannot be negative/, { max_budget: -5 }],
      ["Budget (USD, optional)", "0.001", /at least \$0\.01/, { max_budget: 0.001 }],
      ["Budget (USD, optional)", "1e308", /Enter an amount/, { max_budget: 1e308 }],
      ["Requests per minute", "1.5", /whole number/, { rpm_limit: 1.5 }],
      ["Tokens per minute", "0", /at least 1/, { tpm_limit: 0 }],
    ];
    for (const [label, typed, message, body] of cases) {
      const input = dialog.getByLabel(label, { exact: true });
      await input.fill(typed);
      await dialog.getByRole("button", { name: "Generate", exact: true }).click();
      await expect(input.inputValue(), `${label} ${typed} kept as typed`).resolves.toBe(typed);
      const shown = await errorUnder(dialog, label);
      expect(shown, `${label} ${typed}`).toMatch(message);
      // The server says the same (1e308 as JSON is a number: refused for its size, in the same words' field).
      const server = await postFromPage("/api/keys", { name: "numbers", ...body });
      expect(server.status).toBe(400);
      if (typed !== "1e308") expect(server.message).toBe(shown);
      else expect(server.message).toMatch(/at most \$1,000,000/);
      await input.fill("");
    }
    // A period without an amount is refused, not dropped.
    await dialog.getByLabel("Budget period").click();
    await page.getByRole("option", { name: "Per week" }).click();
    await dialog.getByRole("button", { name: "Generate", exact: true }).click();
    await expect(errorUnder(dialog, "Budget period")).resolves.toMatch(/needs a budget/);
    expect((await postFromPage("/api/keys", { name: "n", budget_duration: "7d" })).status).toBe(400);
    await expect(page.getByTestId("new-key").count()).resolves.toBe(0);
    expect((await ctx.stack.admin.listKeys({ user_id: ctx.userId })).total_count).toBe(0);

    // Looser than the account: the console's words, not the admin API's.
    await dialog.getByLabel("Budget period").click();
    await page.getByRole("option", { name: "No period (total)" }).click();
    await dialog.getByLabel("Budget (USD, optional)").fill("20");
    await dialog.getByRole("button", { name: "Generate", exact: true }).click();
    await dialog.getByText(/Higher than your account's budget \(\$10\.00\)/).waitFor();
    expect((await dialog.textContent()) ?? "").not.toMatch(/max_budget|looser/);
    await page.keyboard.press("Escape");
  }, 90_000);

  it("refuses a negative user budget in the admin's Limits dialog instead of saving 0", async () => {
    await ctx.stack.admin.newUser({ user_id: "neg-user", user_email: "neg@example.com", max_budget: 10 });
    await page.goto(`${ctx.stack.url}/admin`);
    await page.getByLabel("Find a user").fill("neg@");
    await page
      .getByTestId("user-table")
      .getByRole("button", { name: "Limits" })
      .locator("visible=true")
      .click();
    const dialog = page.getByRole("dialog", { name: "Limits of neg@example.com" });
    await dialog.getByLabel("Budget (USD)").fill("-3");
    await dialog.getByRole("button", { name: "Save" }).click();
    await expect(errorUnder(dialog, "Budget (USD)")).resolves.toMatch(/cannot be negative/);
    await expect(dialog.getByLabel("Budget (USD)").inputValue()).resolves.toBe("-3");
    expect((await postFromPage("/api/admin/users/neg-user", { max_budget: -3 })).status).toBe(400);
    expect((await ctx.stack.admin.userInfo("neg-user")).user_info.max_budget).toBe(10);
    await page.keyboard.press("Escape");
  }, 60_000);

  it("lists every key with its owner for the operator, revokes one of no user, and counts every dollar", async () => {
    const mine = await ctx.stack.admin.generateKey({ user_id: ctx.userId, key_alias: "ops-laptop" });
    const loose = await ctx.stack.admin.generateKey({ key_alias: "cron-job" });
    await ctx.stack.admin.generateKey({ key_alias: "chat-service", metadata: { user_headers: true } });
    const call = (key: string) =>
      ctx.stack.gateway
        .clientWith(key)
        .chat.completions.create({ model: "general", messages: [{ role: "user", content: "count me" }] });
    await call(mine.key);
    await call(loose.key);
    await call(MASTER_KEY);
    let rows = 0;
    await waitFor("the three calls booked", async () => {
      rows = (await ctx.stack.admin.spendLogs({ limit: 1000 })).length;
      return rows >= 3;
    });

    await page.goto(`${ctx.stack.url}/all-keys`);
    const row = (alias: string) => page.getByTestId("key-row").filter({ hasText: alias });
    await row("cron-job").waitFor();
    await expect(row("ops-laptop").getByTestId("key-owner").textContent()).resolves.toBe("ops@example.com");
    await expect(row("cron-job").getByTestId("key-owner").textContent()).resolves.toBe("no user");
    await expect(row("chat-service").getByTestId("key-owner").textContent()).resolves.toBe(
      "Chat (service key)",
    );
    await page.getByLabel("Find a key").fill("no user");
    await expect(page.getByTestId("key-row").count()).resolves.toBe(1);
    await row("cron-job")
      .getByRole("button", { name: /^Revoke/ })
      .click();
    await page
      .getByRole("dialog", { name: "Revoke this key?" })
      .getByRole("button", { name: "Revoke" })
      .click();
    await waitFor(
      "the key revoked",
      async () => (await ctx.stack.admin.keyInfo(loose.token)).info.status === "revoked",
    );

    // Platform spend: every request, the master key's and the no-user key's too.
    const spend = await page.evaluate<{ totals: { requests: number } }>(
      `fetch("/api/admin/spend?days=7").then((r) => r.json())`,
    );
    expect(spend.totals.requests).toBe(rows);
    const csv = await page.evaluate<string>(
      `fetch("/api/admin/spend/export.csv?days=7").then((r) => r.text())`,
    );
    const lines = csv.trim().split("\r\n");
    expect(lines[0]).toMatch(/^time,request_id,user_id,user_email,/);
    expect(lines).toHaveLength(rows + 1);
    expect(lines.some((l) => l.includes(`,${ctx.userId},ops@example.com,`))).toBe(true);
    expect(lines.filter((l) => /^[^,]+,[^,]+,,,/.test(l))).toHaveLength(2); // no user: the master key, cron-job
  }, 90_000);

  it("edits a key's name, limits, models and expiry for its owner and for the operator, audited", async () => {
    const made = await ctx.stack.admin.generateKey({ user_id: ctx.userId, key_alias: "to-edit" });
    await page.goto(`${ctx.stack.url}/keys`);
    const row = page.getByTestId("key-row").filter({ hasText: "to-edit" });
    await row.getByRole("button", { name: /^Edit/ }).click();
    const dialog = page.getByRole("dialog", { name: /^Edit key/ });
    await dialog.getByLabel("Name").fill("edited");
    await dialog.getByLabel("Requests per minute").fill("100"); // more than the account's 60
    await dialog.getByRole("button", { name: "Save" }).click();
    await expect
      .poll(() => errorUnder(dialog, "Requests per minute"))
      .toMatch(/Higher than your account's requests per minute \(60\)/);
    await dialog.getByLabel("Requests per minute").fill("5");
    await dialog.getByLabel("Expires").click();
    await page.getByRole("option", { name: "30 days from today" }).click();
    await dialog.getByLabel("Models").click();
    await page.getByRole("option", { name: "general" }).click();
    await dialog.getByLabel("Name").click(); // closes the models list
    await dialog.getByRole("button", { name: "Save" }).click();
    await dialog.waitFor({ state: "detached" });
    const { info } = await ctx.stack.admin.keyInfo(made.token);
    expect(info).toMatchObject({ key_alias: "edited", rpm_limit: 5, models: ["general"] });
    const days = (Date.parse(String(info.expires)) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29);
    expect(days).toBeLessThanOrEqual(30);
    await page.getByTestId("key-row").filter({ hasText: "edited" }).waitFor();

    // The operator's view edits any key.
    await page.goto(`${ctx.stack.url}/all-keys`);
    await page
      .getByTestId("key-row")
      .filter({ hasText: "edited" })
      .getByRole("button", { name: /^Edit/ })
      .click();
    await dialog.getByLabel("Budget (USD, optional)").fill("2.5");
    await dialog.getByRole("button", { name: "Save" }).click();
    await page.getByText("The key edited is changed").waitFor();
    expect((await ctx.stack.admin.keyInfo(made.token)).info.max_budget).toBe(2.5);
    const audit = (await ctx.stack.admin.auditLogs({ key_hash: made.token, action: "key.update" })).logs;
    expect(audit.map((r) => r.actor)).toEqual([`console:user:${ctx.userId}`, `console:user:${ctx.userId}`]);
  }, 90_000);
});
