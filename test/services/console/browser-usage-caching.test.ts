/**
 * The Usage tab in Chromium against a real gateway: cached input tokens and what caching saved, with what the
 * figure means written beside it (issue 29's console item); failed calls counted apart from answered ones and
 * each recent request's status; the budget banner saying calls are being refused from 95 % (issue 34,
 * defect 4). axe-core finds no violation on the tab at 1440 and 390 px.
 */
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { leaveMidStream } from "../../helpers/console.js";
import {
  a11yViolations,
  type BrowserConsole,
  SHOTS,
  skipReason,
  useBrowserConsole,
} from "../../helpers/console-browser.js";
import { waitFor } from "../../helpers/redis.js";

let ctx: BrowserConsole;
let page: Page;

describe.skipIf(skipReason !== undefined)(`Usage: caching, failed calls, banner ${skipReason ?? ""}`, () => {
  ctx = useBrowserConsole("grace@example.com", {}, async () => {
    page = ctx.page;
    await page.goto(`${ctx.stack.url}/profile`); // provisions the user
    await page.locator("h1").first().waitFor();
    const key = await ctx.stack.admin.generateKey({ user_id: ctx.userId, key_alias: "agent" });
    const client = ctx.stack.gateway.clientWith(key.key).withOptions({ maxRetries: 0 });
    const body = { model: "general", messages: [{ role: "user" as const, content: "system prompt" }] };
    // 1,800 of 2,000 prompt tokens from the cache: 1,800 × ($0.0001 − $0.00001) = $0.162 saved.
    ctx.stack.upstream.nextUsage({
      prompt_tokens: 2_000,
      completion_tokens: 20,
      total_tokens: 2_020,
      prompt_tokens_details: { cached_tokens: 1_800 },
    });
    await client.chat.completions.create(body);
    // A client that leaves mid-stream: booked as 499.
    const release = await leaveMidStream(ctx.stack.upstream, client, "general");
    await waitFor("both calls booked", async () => {
      return (await ctx.stack.admin.usage({ user_id: ctx.userId, days: 7 })).totals.requests === 2;
    });
    release();
  });

  it("shows the cached input tokens and what caching saved, and says what that figure is", async () => {
    await page.goto(`${ctx.stack.url}/usage`);
    const caching = page.getByTestId("caching");
    await caching.waitFor();
    const text = (await caching.textContent()) ?? "";
    expect(text).toContain("Cached input tokens");
    expect(text).toMatch(/1[,.\u202f\u00a0]?800/);
    const { totals } = await ctx.stack.admin.usage({ user_id: ctx.userId, days: 7 });
    expect(text).toContain(`${Math.round((1800 / totals.prompt_tokens) * 100)} % of input tokens`);
    expect(text).toContain("$0.162");
    expect(text).toContain("would have cost as fresh input");
    await page.screenshot({ path: join(SHOTS, "usage-caching.png"), fullPage: true });
  }, 60_000);

  it("counts the failed call apart and names each recent request's status", async () => {
    await page.goto(`${ctx.stack.url}/usage`);
    await page.getByTestId("requests-stat").waitFor();
    await expect(page.getByTestId("requests-stat").textContent()).resolves.toContain(
      "1 answered · 0 refused · 1 failed",
    );
    const table = (await page.getByTestId("recent-requests").textContent()) ?? "";
    expect(table).toContain("Client left (499)");
    expect(table).toContain("OK");
    await expect(page.getByTestId("refusals-note").textContent()).resolves.toMatch(
      /listed below and in the CSV/,
    );
  }, 60_000);

  it("says calls are being refused from 95 % of the budget", async () => {
    const { spend } = (await ctx.stack.admin.userInfo(ctx.userId)).user_info;
    await ctx.stack.admin.updateUser({ user_id: ctx.userId, max_budget: Number((spend / 0.96).toFixed(4)) });
    await page.goto(`${ctx.stack.url}/usage`);
    const banner = page.getByTestId("budget-warning");
    await banner.waitFor();
    await expect(banner.textContent()).resolves.toMatch(
      /Calls are being refused now when their estimated cost/,
    );
  }, 60_000);

  it("has no axe violation on Usage at 1440 and 390 px", async () => {
    const found: string[] = [];
    for (const viewport of [
      { width: 1440, height: 900 },
      { width: 390, height: 844 },
    ]) {
      await page.setViewportSize(viewport);
      await page.goto(`${ctx.stack.url}/usage`);
      await page.getByTestId("caching").waitFor();
      for (const v of await a11yViolations(page)) {
        found.push(`${viewport.width} px: ${v.id} ${v.help} — ${v.targets.join(", ")}`);
      }
    }
    expect(found).toEqual([]);
  }, 60_000);
});

describe.skipIf(skipReason !== undefined)(`dark mode ${skipReason ?? ""}`, () => {
  // The first account: an administrator.
  const dark = useBrowserConsole("hedy@example.com", {}, async () => {
    await dark.page.emulateMedia({ colorScheme: "dark" });
    await dark.page.goto(`${dark.stack.url}/profile`); // provisions the user
    await dark.page.locator("h1").first().waitFor();
    // Something on every tab: a key with a call, and a budget 90 % used (the orange banner, the key's badge).
    const key = await dark.stack.admin.generateKey({
      user_id: dark.userId,
      key_alias: "night",
      max_budget: 1,
    });
    await dark.stack.gateway
      .clientWith(key.key)
      .chat.completions.create({ model: "general", messages: [{ role: "user", content: "hi" }] });
    await waitFor("the call booked", async () => {
      return (await dark.stack.admin.usage({ user_id: dark.userId, days: 7 })).totals.requests === 1;
    });
    const { spend } = (await dark.stack.admin.userInfo(dark.userId)).user_info;
    await dark.stack.admin.updateUser({ user_id: dark.userId, max_budget: Number((spend / 0.9).toFixed(6)) });
    await dark.stack.admin.updateKey({ key: key.key, max_budget: Number((spend / 0.9).toFixed(6)) });
  });

  it("follows the system's dark scheme, and axe finds no violation (contrast included) on any tab", async () => {
    const p = dark.page;
    const found: string[] = [];
    for (const viewport of [
      { width: 1440, height: 900 },
      { width: 390, height: 844 },
    ]) {
      await p.setViewportSize(viewport);
      for (const tab of ["profile", "usage", "keys", "teams", "admin", "all-keys", "audit"]) {
        await p.goto(`${dark.stack.url}/${tab}`);
        await p.waitForLoadState("networkidle");
        await p.locator("h1, h2").first().waitFor();
        await expect(p.locator("html").getAttribute("data-mantine-color-scheme")).resolves.toBe("dark");
        await p.getByTestId("budget-warning").waitFor();
        if (viewport.width === 1440) {
          await p.screenshot({ path: join(SHOTS, `dark-${tab}-1440.png`), fullPage: true });
        }
        for (const v of await a11yViolations(p)) {
          found.push(`${tab} at ${viewport.width} px: ${v.id} ${v.help} — ${v.targets.join(", ")}`);
        }
      }
    }
    expect(found).toEqual([]);
  }, 180_000);
});
