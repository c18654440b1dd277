/**
 * The console in a real browser (Debian Chromium driven by playwright-core) against a real gateway: a chat
 * user signed in with a cookie minted as LibreChat mints it generates a key, sees it once with snippets,
 * confirms "I've saved it", sees it masked, calls the gateway with it through the `openai` client, sees the
 * call in Usage, revokes it (confirm dialog "Revoke") and the key is refused. A budget above 80 % warns on
 * every tab. Screenshots of every tab at 1280 and 390 px go to test-results/console/.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConsoleStack,
  JWT_REFRESH_SECRET,
  startConsoleStack,
  waitUntilKeyRefused,
} from "../../helpers/console.js";
import { waitFor } from "../../helpers/redis.js";

const CHROMIUM = "/usr/bin/chromium";
const repoRoot = join(import.meta.dirname, "../../..");
const webRoot = join(repoRoot, "services/console/dist/web");
const shots = join(repoRoot, "test-results/console");
const WIDTHS = [1280, 390] as const;

let stack: ConsoleStack;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let userId: string;

async function screenshotAll(name: string): Promise<void> {
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    await page.waitForTimeout(150); // charts re-measure on resize
    await page.screenshot({ path: join(shots, `${name}-${width}.png`), fullPage: true });
    // Nothing wider than the window: wide tables scroll inside their own box.
    expect(
      await page.evaluate<number>("document.documentElement.scrollWidth"),
      `${name} at ${width} px`,
    ).toBeLessThanOrEqual(width);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

async function openTab(label: string): Promise<void> {
  await page.getByRole("tab", { name: label }).click();
}

// Skipped only where Debian's chromium is not installed at /usr/bin/chromium; the title then says so.
const skip = existsSync(CHROMIUM) ? undefined : `(skipped: no Chromium at ${CHROMIUM})`;

describe.skipIf(skip !== undefined)(`the console in Chromium ${skip ?? ""}`, () => {
  beforeAll(async () => {
    // The bundle under test is the one the server serves: build it from the current source.
    execFileSync(
      "npx",
      ["vite", "build", "--config", "services/console/web/vite.config.ts", "--logLevel", "error"],
      {
        cwd: repoRoot,
        stdio: "inherit",
      },
    );
    mkdirSync(shots, { recursive: true });
    stack = await startConsoleStack({ webRoot });
    userId = stack.mongo.register("ada@example.com"); // first account: ADMIN
    const { refreshToken } = await stack.mongo.signIn(userId, JWT_REFRESH_SECRET);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    });
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    // As the chat sets it: host-only on localhost, httpOnly; the console shares it across ports.
    await context.addCookies([
      {
        name: "refreshToken",
        value: refreshToken,
        domain: "localhost",
        path: "/",
        httpOnly: true,
        sameSite: "Lax",
      },
    ]);
    page = await context.newPage();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it("sends a browser without a chat session to /unauthorized", async () => {
    const anonymous = await browser.newContext();
    const p = await anonymous.newPage();
    await p.goto(`${stack.url}/keys`);
    expect(new URL(p.url()).pathname).toBe("/unauthorized");
    await expect(p.getByRole("link", { name: "Go to the chat" }).getAttribute("href")).resolves.toBe(
      "http://localhost:3080",
    );
    await p.screenshot({ path: join(shots, "unauthorized-1280.png") });
    await p.goto(`${stack.url}/admin/login`);
    await p.getByRole("heading", { name: "Operator sign-in" }).waitFor();
    await p.screenshot({ path: join(shots, "admin-login-1280.png") });
    await anonymous.close();
  });

  it("generates a key shown once with snippets, masks it, sees its call in Usage, revokes it", async () => {
    await page.goto(`${stack.url}/keys`);
    await page.getByRole("button", { name: "Generate key" }).click();
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

    const client = stack.gateway.clientWith(fullKey);
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
  });

  it("warns on every tab above 80 % of the budget; screenshots of every tab", async () => {
    // A second key with some use, so the charts and tables have data.
    const key = await stack.admin.generateKey({ user_id: userId, key_alias: "ci-pipeline" });
    const client = stack.gateway.clientWith(key.key);
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
        stack.admin.usage({ user_id: userId, days: 7 }),
        stack.admin.userInfo(userId),
      ]);
      spent = user.user_info.spend;
      return usage.totals.requests === 4 && Math.abs(spent - usage.totals.spend) < 1e-9;
    });
    await stack.admin.updateUser({ user_id: userId, max_budget: Number((spent / 0.9).toFixed(6)) });

    await page.goto(`${stack.url}/profile`);
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
  });
});
