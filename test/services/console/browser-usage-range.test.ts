/**
 * Usage in Chromium (issue 34's Usage items): a date range instead of a period, the period's requests paged
 * 50 at a time past the first 50, and times in the browser's time zone with the zone named.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import {
  a11yViolations,
  type BrowserConsole,
  skipReason,
  useBrowserConsole,
} from "../../helpers/console-browser.js";
import { waitFor } from "../../helpers/redis.js";

let ctx: BrowserConsole;
let page: Page;
const CALLS = 55;
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

describe.skipIf(skipReason !== undefined)(`Usage: range, paging, time zone ${skipReason ?? ""}`, () => {
  ctx = useBrowserConsole("katherine@example.com", {}, async () => {
    page = ctx.page;
    await page.goto(`${ctx.stack.url}/profile`); // provisions the user
    await page.locator("h1").first().waitFor();
    await ctx.stack.admin.updateUser({ user_id: ctx.userId, rpm_limit: 1000, tpm_limit: 1_000_000 });
    const key = await ctx.stack.admin.generateKey({ user_id: ctx.userId, key_alias: "batch" });
    const client = ctx.stack.gateway.clientWith(key.key);
    for (let i = 0; i < CALLS; i++) {
      await client.chat.completions.create({
        model: "general",
        messages: [{ role: "user", content: `n${i}` }],
      });
    }
    await waitFor("every call booked", async () => {
      return (await ctx.stack.admin.usage({ user_id: ctx.userId, days: 7 })).totals.requests === CALLS;
    });
  });

  const caption = () => page.getByTestId("requests-caption").textContent();
  const rows = () => page.getByTestId("recent-requests").locator("tbody tr").count();

  it("pages the period's requests 50 at a time", async () => {
    await page.goto(`${ctx.stack.url}/usage`);
    await page.getByTestId("recent-requests").waitFor();
    await expect(caption()).resolves.toBe(`Requests, newest first: 1–50 of ${CALLS}`);
    await expect(rows()).resolves.toBe(50);
    await page.getByRole("button", { name: "Page 2" }).click();
    await expect.poll(caption).toBe(`Requests, newest first: 51–55 of ${CALLS}`);
    await expect(rows()).resolves.toBe(5);
  }, 60_000);

  it("takes a date range: figures, requests and the CSV link follow it; an impossible range says why", async () => {
    await page.goto(`${ctx.stack.url}/usage`);
    await page.getByText("Date range", { exact: true }).click();
    const first = page.getByLabel("First day (UTC)");
    const last = page.getByLabel("Last day (UTC)");
    await expect(first.inputValue()).resolves.toBe(day(-6));
    await expect(last.inputValue()).resolves.toBe(day(0));
    await expect.poll(caption).toContain(`of ${CALLS}`);
    await first.fill(day(-10));
    await last.fill(day(-1));
    await expect.poll(() => page.getByTestId("requests-stat").textContent()).toContain("0 answered");
    await expect(page.getByText("No requests in this period.").first().isVisible()).resolves.toBe(true);
    await expect(page.getByRole("link", { name: "Download CSV" }).getAttribute("href")).resolves.toBe(
      `/api/usage/export.csv?from=${day(-10)}&to=${day(-1)}`,
    );
    await last.fill(day(-12));
    await page.getByText("The last day cannot be before the first.").waitFor();
    for (const v of await a11yViolations(page))
      throw new Error(`${v.id}: ${v.help} — ${v.targets.join(", ")}`);
  }, 60_000);

  it("shows times in the browser's time zone, the zone named", async () => {
    const tokyo = await ctx.browser.newContext({ timezoneId: "Asia/Tokyo", locale: "en-US" });
    await tokyo.addCookies(await ctx.context.cookies());
    const p = await tokyo.newPage();
    try {
      await p.goto(`${ctx.stack.url}/usage`);
      const firstTime = p.getByTestId("recent-requests").locator("tbody tr td").first();
      await firstTime.waitFor();
      const shown = (await firstTime.textContent()) ?? "";
      expect(shown).toContain("GMT+9");
      const newest = (await ctx.stack.admin.spendLogs({ user_id: ctx.userId, limit: 1 }))[0];
      const hour = new Date(Date.parse(String(newest?.startTime)) + 9 * 3_600_000).getUTCHours() % 12 || 12;
      expect(shown).toContain(`${String(hour).padStart(2, "0")}:`);
    } finally {
      await tokyo.close();
    }
  }, 60_000);
});
