/**
 * The console in a real browser (Debian Chromium driven by playwright-core) against a real gateway: a chat
 * user signed in with a cookie minted as LibreChat mints it generates a key, sees it once with snippets,
 * confirms "I've saved it", sees it masked, calls the gateway with it through the `openai` client, sees the
 * call in Usage, revokes it (confirm dialog "Revoke") and the key is refused. A budget above 80 % warns on
 * every tab. Screenshots of every tab at 1280 and 390 px go to test-results/console/.
 */
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { waitUntilKeyRefused } from "../../helpers/console.js";
import {
  type BrowserConsole,
  SHOTS as shots,
  skipReason as skip,
  useBrowserConsole,
  VIEWPORTS,
} from "../../helpers/console-browser.js";
import { waitFor } from "../../helpers/redis.js";

let ctx: BrowserConsole;
let page: Page;

async function screenshotAll(name: string): Promise<void> {
  for (const viewport of VIEWPORTS) {
    const { width } = viewport;
    await page.setViewportSize(viewport);
    await page.waitForTimeout(150); // charts re-measure on resize
    await page.screenshot({ path: join(shots, `${name}-${width}.png`), fullPage: true });
    // Nothing wider than the window: wide tables scroll inside their own box.
    expect(
      await page.evaluate<number>("document.documentElement.scrollWidth"),
      `${name} at ${width} px`,
    ).toBeLessThanOrEqual(width);
  }
  await page.setViewportSize(VIEWPORTS[0]);
}

async function openTab(label: string): Promise<void> {
  await page.getByRole("tab", { name: label }).click();
}

describe.skipIf(skip !== undefined)(`the console in Chromium ${skip ?? ""}`, () => {
  ctx = useBrowserConsole(undefined, {}, async () => {
    page = ctx.page;
  });

  it("sends a browser without a chat session to /unauthorized", async () => {
    const anonymous = await ctx.browser.newContext();
    const p = await anonymous.newPage();
    await p.goto(`${ctx.stack.url}/keys`);
    expect(new URL(p.url()).pathname).toBe("/unauthorized");
    await expect(p.getByRole("link", { name: "Go to the chat" }).getAttribute("href")).resolves.toBe(
      "http://localhost:3080",
    );
    await p.screenshot({ path: join(shots, "unauthorized-1280.png") });
    await p.goto(`${ctx.stack.url}/admin/login`);
    await p.getByRole("heading", { name: "Operator sign-in" }).waitFor();
    await p.screenshot({ path: join(shots, "admin-login-1280.png") });
    await anonymous.close();
  }, 60_000);

  it("generates a key shown once with snippets, masks it, sees its call in Usage, revokes it", async () => {
    await page.goto(`${ctx.stack.url}/keys`);
    // An empty account is asked to make its first key, from the empty table itself.
    const first = page.getByTestId("first-key");
    await expect(first.textContent()).resolves.toContain("You have no keys yet");
    await first.getByRole("button", { name: "Generate your first key" }).click();
    await expect(page.getByTestId("account-limits").textContent()).resolves.toContain("60 requests/min");
    await page.getByLabel("Name").fill("browser-key");
    await screenshotAll("generate-dialog");
    await page.getByRole("button", { name: "Generate", exact: true }).click();

    const fullKey = (await page.getByTestId("new-key").textContent())?.trim() ?? "";
    expect(fullKey).toMatch(/^sk-[0-9A-Za-z]{40}$/);
    const curl = (await page.getByTestId("snippet-curl").textContent()) ?? "";
    expect(curl).toContain("http://localhost:4000/v1/chat/completions");
    expect(curl).toContain(`Bearer ${fullKey}`);
    await page.getByRole("tab", { name: "Python" }).click();
    await expect(page.getByTestId("snippet-python").textContent()).resolves.toContain(
      `OpenAI(base_url="http://localhost:4000/v1", api_key="${fullKey}")`,
    );
    await page.getByRole("tab", { name: "JavaScript" }).click();
    await expect(page.getByTestId("snippet-javascript").textContent()).resolves.toContain(
      `apiKey: "${fullKey}"`,
    );
    await screenshotAll("new-key");
    await page.getByRole("button", { name: "I've saved it" }).click();

    const masked = `sk-…${fullKey.slice(-4)}`;
    await page.getByTestId("masked-key").filter({ hasText: masked }).waitFor();
    expect(await page.content()).not.toContain(fullKey);

    const client = ctx.stack.gateway.clientWith(fullKey);
    const reply = await client.chat.completions.create({
      model: "general",
      messages: [{ role: "user", content: "hello from the browser test" }],
    });
    expect(reply.choices[0]?.message.content).toBeTruthy();

    await openTab("Usage");
    await waitFor(
      "the call in Usage",
      async () => {
        // Switching the period reloads the usage.
        await page.getByText("30 days", { exact: true }).click();
        await page.getByText("7 days", { exact: true }).click();
        const table = page.getByTestId("recent-requests");
        await table.waitFor();
        return ((await table.textContent()) ?? "").includes("browser-key");
      },
      10_000,
      300,
    );
    expect(await page.getByTestId("recent-requests").textContent()).toContain("general");

    await openTab("API keys");
    await page.getByRole("button", { name: /^Revoke browser-key/ }).click();
    const dialog = page.getByRole("dialog", { name: "Revoke this key?" });
    await dialog.getByRole("button", { name: "Revoke" }).click();
    await page.getByTestId("masked-key").filter({ hasText: masked }).waitFor({ state: "detached" });
    await waitUntilKeyRefused(client);
  }, 90_000);

  it("warns on every tab above 80 % of the budget; screenshots of every tab", async () => {
    // A second key with some use, so the charts and tables have data.
    const key = await ctx.stack.admin.generateKey({ user_id: ctx.userId, key_alias: "ci-pipeline" });
    const client = ctx.stack.gateway.clientWith(key.key);
    for (const model of ["general", "fast", "general"]) {
      await client.chat.completions.create({
        model,
        messages: [{ role: "user", content: `a ${model} request` }],
      });
    }
    // Spend is written in batches: wait until all four calls are booked on the user.
    let spent = 0;
    await waitFor("spend booked", async () => {
      const [usage, user] = await Promise.all([
        ctx.stack.admin.usage({ user_id: ctx.userId, days: 7 }),
        ctx.stack.admin.userInfo(ctx.userId),
      ]);
      spent = user.user_info.spend;
      return usage.totals.requests === 4 && Math.abs(spent - usage.totals.spend) < 1e-9;
    });
    await ctx.stack.admin.updateUser({ user_id: ctx.userId, max_budget: Number((spent / 0.9).toFixed(6)) });

    await page.goto(`${ctx.stack.url}/profile`);
    for (const [tab, name] of [
      ["Profile", "profile"],
      ["Usage", "usage"],
      ["API keys", "keys"],
      ["Admin", "admin"],
    ] as const) {
      await openTab(tab);
      await page.getByTestId("budget-warning").waitFor();
      expect(await page.getByTestId("budget-warning").textContent()).toContain("90 %");
      await page.waitForLoadState("networkidle");
      await screenshotAll(`tab-${name}`);
    }
  }, 120_000);
});
