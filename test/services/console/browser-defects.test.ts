/**
 * The console's rough edges, in Chromium against a real gateway: the new key has its own Copy button and the
 * copied key is accepted by the gateway; the key is fully visible at 390 px; a limit looser than the
 * account's is refused with the server's message (never silently lowered); a duplicate name is said once,
 * in the user's terms; a failed load offers Retry instead of an endless spinner; Enter submits the form;
 * axe-core finds no serious or critical violation on any page at 1440×900 and 390×844.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import {
  type BrowserConsole,
  SHOTS,
  seriousA11yViolations,
  skipReason,
  useBrowserConsole,
  VIEWPORTS,
} from "../../helpers/console-browser.js";
import { waitFor } from "../../helpers/redis.js";

let ctx: BrowserConsole;
let page: Page;

const PHONE = VIEWPORTS[1];
const DESKTOP = VIEWPORTS[0];

async function openGenerateDialog(): Promise<void> {
  await page.goto(`${ctx.stack.url}/keys`);
  await page.getByRole("button", { name: "Generate key" }).click();
  await page.getByRole("dialog", { name: "Generate a key" }).waitFor();
}

describe.skipIf(skipReason !== undefined)(`the console's fixes in Chromium ${skipReason ?? ""}`, () => {
  ctx = useBrowserConsole(undefined, {}, async () => {
    page = ctx.page;
    await ctx.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: ctx.stack.url });
  });

  it("copies the new key with its own button (the gateway accepts it); the key is fully visible at 390 px; Enter submits", async () => {
    await page.setViewportSize(PHONE);
    await openGenerateDialog();
    await page.getByLabel("Name").fill("phone-key");
    await page.getByLabel("Name").press("Enter");
    const box = page.getByTestId("new-key");
    await box.waitFor();
    const key = ((await box.textContent()) ?? "").trim();
    expect(key).toMatch(/^sk-[0-9A-Za-z]{40}$/);
    // No hidden scroll, nothing outside the window.
    const fit = await page.evaluate<{ scroll: number; client: number; right: number }>(`(() => {
      const el = document.querySelector('[data-testid="new-key"]');
      return { scroll: el.scrollWidth, client: el.clientWidth, right: el.getBoundingClientRect().right };
    })()`);
    expect(fit.scroll).toBeLessThanOrEqual(fit.client);
    expect(fit.right).toBeLessThanOrEqual(PHONE.width);
    // A double click selects the whole key, `sk-` included.
    await box.dblclick();
    expect((await page.evaluate<string>("String(window.getSelection())")).trim()).toBe(key);

    await page.getByRole("button", { name: "Copy key" }).click();
    const copied = await page.evaluate<string>("navigator.clipboard.readText()");
    expect(copied).toBe(key);
    const reply = await ctx.stack.gateway.clientWith(copied).chat.completions.create({
      model: "general",
      messages: [{ role: "user", content: "copied from the console" }],
    });
    expect(reply.choices[0]?.message.content).toBeTruthy();
    await page.getByRole("button", { name: "I've saved it" }).click();
    await page.setViewportSize(DESKTOP);
  }, 60_000);

  it("refuses a looser limit with the server's message instead of lowering it; the budget says its maximum", async () => {
    await openGenerateDialog();
    const budget = page.getByLabel("Budget (USD, optional)");
    await expect(budget.getAttribute("placeholder")).resolves.toBe("up to $10.00");
    await page.getByLabel("Name").fill("greedy");
    await budget.fill("1000");
    await page.getByLabel("Requests per minute").fill("5000");
    await page.getByLabel("Name").click(); // leave the fields: nothing may change their values
    await expect(budget.inputValue()).resolves.toBe("1000");
    await expect(page.getByLabel("Requests per minute").inputValue()).resolves.toBe("5000");
    await page.getByRole("button", { name: "Generate", exact: true }).click();
    const dialog = page.getByRole("dialog", { name: "Generate a key" });
    await dialog
      .getByText(/max_budget|budget/i)
      .first()
      .waitFor();
    const text = (await dialog.textContent()) ?? "";
    expect(text).toMatch(/exceeds|above|looser|at most|higher/i);
    await expect(page.getByTestId("new-key").count()).resolves.toBe(0);
    await page.keyboard.press("Escape");
  }, 60_000);

  it("says a duplicate name once, in the user's terms", async () => {
    await ctx.stack.admin.generateKey({ user_id: ctx.userId, key_alias: "laptop" });
    await openGenerateDialog();
    await page.getByLabel("Name").fill("laptop");
    await page.getByRole("button", { name: "Generate", exact: true }).click();
    const message = 'You already have an active key named "laptop". Choose another name or revoke that key.';
    await page.getByText(message).first().waitFor();
    await expect(page.getByText(message).count()).resolves.toBe(1);
    const dialog = (await page.getByRole("dialog", { name: "Generate a key" }).textContent()) ?? "";
    expect(dialog).not.toContain("key_alias");
    await page.keyboard.press("Escape");
  }, 60_000);

  it("offers Retry when a load fails, with no spinner left turning", async () => {
    let fail = true;
    await page.route("**/api/keys", (route) => (fail ? route.abort("failed") : route.continue()));
    await page.goto(`${ctx.stack.url}/keys`);
    const retry = page.getByRole("button", { name: "Retry" });
    await retry.waitFor();
    await expect(page.locator(".mantine-Loader-root").count()).resolves.toBe(0);
    fail = false;
    await retry.click();
    await page.getByTestId("key-table").waitFor();
    await expect(retry.count()).resolves.toBe(0);
    await page.unroute("**/api/keys");
  }, 60_000);

  it("downloads the period's requests as CSV from the Usage tab and the Admin view", async () => {
    for (const [path, name] of [
      ["/usage", /^usage-30d-\d{4}-\d{2}-\d{2}\.csv$/],
      ["/admin", /^platform-spend-30d-\d{4}-\d{2}-\d{2}\.csv$/],
    ] as const) {
      await page.goto(`${ctx.stack.url}${path}`);
      const [download] = await Promise.all([
        page.waitForEvent("download"),
        page.getByRole("link", { name: "Download CSV" }).click(),
      ]);
      expect(download.suggestedFilename()).toMatch(name);
      const file = await download.path();
      expect(readFileSync(file, "utf8")).toMatch(/^time,request_id,user_id,user_email,model,/);
    }
  }, 60_000);

  it("warns on a key past 80 % of its budget; roles read the same on Profile and Admin", async () => {
    const key = await ctx.stack.admin.generateKey({ user_id: ctx.userId, key_alias: "nearly-spent" });
    await ctx.stack.gateway
      .clientWith(key.key)
      .chat.completions.create({ model: "general", messages: [{ role: "user", content: "spend a little" }] });
    let spend = 0;
    await waitFor("the call booked on the key", async () => {
      spend = (await ctx.stack.admin.keyInfo(key.token)).info.spend;
      return spend > 0;
    });
    await ctx.stack.admin.updateKey({ key: key.token, max_budget: Number((spend / 0.85).toFixed(8)) });
    await page.goto(`${ctx.stack.url}/keys`);
    const row = page.getByTestId("key-row").filter({ hasText: "nearly-spent" });
    await expect(row.getByTestId("key-budget-warning").textContent()).resolves.toBe("85 % of budget used");

    await page.goto(`${ctx.stack.url}/profile`);
    const profileRole = (await page.locator(".mantine-Badge-root").first().textContent())?.trim();
    await page.goto(`${ctx.stack.url}/admin`);
    const adminRow = page.getByTestId("user-table").locator("tr").filter({ hasText: "ada@example.com" });
    await expect(adminRow.textContent()).resolves.toContain(`${profileRole}`);
    expect(profileRole).toBe("Admin");
  }, 60_000);

  it("admin Limits: a period dropdown, Save shows progress then a saved notice; users can be searched", async () => {
    await ctx.stack.admin.newUser({ user_id: "zed-user", user_email: "zed@example.com" });
    await page.goto(`${ctx.stack.url}/admin`);
    await page.getByLabel("Find a user").fill("zed");
    const table = page.getByTestId("user-table");
    // The users load after the page: wait for the found row before counting (a count reads once).
    await table.locator("tbody tr", { hasText: "zed@example.com" }).waitFor();
    await expect(table.locator("tbody tr").count()).resolves.toBe(1);
    await table.getByRole("button", { name: "Limits" }).click();
    const dialog = page.getByRole("dialog", { name: "Limits of zed@example.com" });
    await dialog.getByLabel("Budget period").click();
    await page.getByRole("option", { name: "Per week" }).click();
    await dialog.getByLabel("Budget (USD)").fill("25");
    await dialog.getByRole("button", { name: "Save" }).click();
    await page.getByText("The limits of zed@example.com are saved").waitFor();
    const info = await ctx.stack.admin.userInfo("zed-user");
    expect(info.user_info).toMatchObject({ max_budget: 25, budget_duration: "7d" });
    // The table reloads after the save: wait for the row to show the new period (a locator waits, a read does not).
    await table.locator("tbody tr", { hasText: "/ 7d" }).waitFor();
    await expect(table.textContent()).resolves.toContain("$25.00 / 7d");
  }, 60_000);

  it("has one h1 and no serious or critical axe-core violation on any page at both widths", async () => {
    const pages: Array<[string, () => Promise<void>]> = [
      ["profile", () => page.goto(`${ctx.stack.url}/profile`).then(() => undefined)],
      ["usage", () => page.goto(`${ctx.stack.url}/usage`).then(() => undefined)],
      ["keys", () => page.goto(`${ctx.stack.url}/keys`).then(() => undefined)],
      ["admin", () => page.goto(`${ctx.stack.url}/admin`).then(() => undefined)],
      ["generate dialog", openGenerateDialog],
      ["unauthorized", () => page.goto(`${ctx.stack.url}/unauthorized`).then(() => undefined)],
      ["admin login", () => page.goto(`${ctx.stack.url}/admin/login`).then(() => undefined)],
    ];
    const found: string[] = [];
    for (const viewport of VIEWPORTS) {
      await page.setViewportSize(viewport);
      for (const [name, open] of pages) {
        await open();
        await page.waitForLoadState("networkidle");
        await page.locator("h1").first().waitFor();
        expect(await page.locator("h1").count(), `${name} at ${viewport.width}`).toBe(1);
        const file = `page-${name.replace(/ /g, "-")}-${viewport.width}.png`;
        await page.screenshot({ path: join(SHOTS, file), fullPage: true });
        for (const v of await seriousA11yViolations(page)) {
          found.push(
            `${name} at ${viewport.width} px: ${v.id} (${v.impact}) ${v.help} — ${v.targets.join(", ")}`,
          );
        }
      }
    }
    await page.setViewportSize(DESKTOP);
    expect(found).toEqual([]);
    // Only the failures this file provokes (400 refusals, the aborted load, /unauthorized's 401): no 404
    // (the favicon) and no script or style blocked by the CSP.
    expect(ctx.consoleErrors.filter((e) => !/status of 40[01] |net::ERR_FAILED/.test(e))).toEqual([]);
  }, 180_000);
});
