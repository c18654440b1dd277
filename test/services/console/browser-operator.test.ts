/**
 * The console without a chat (operator-only mode, as `npm start` runs it) in Chromium against a real gateway:
 * the operator signs in with the master key, generates a key of no user in the Admin view, copies it with
 * the dialog's Copy button and the gateway accepts it; generates a key for a listed user (that user's limits
 * as hints) and is told under the field when a typed user does not exist. A key's budget bar and badge warn
 * from 80 % and say "budget exhausted" from 100 %. Screenshots at 1440×900 and 390×844, axe-core clean.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import {
  type BrowserConsole,
  shootBoth as shootPage,
  skipReason,
  useBrowserConsole,
} from "../../helpers/console-browser.js";
import { MASTER_KEY } from "../../helpers/gateway.js";
import { waitFor } from "../../helpers/redis.js";

let ctx: BrowserConsole;
let page: Page;

/** Screenshots `name` at both widths (full page) and collects serious axe-core violations. */
const shootBoth = (name: string) => shootPage(page, name);

async function openGenerate(from: "toolbar" | string): Promise<void> {
  if (from === "toolbar") {
    await page.getByRole("button", { name: "Generate key", exact: true }).click();
  } else {
    const row = page.getByTestId("user-table").locator("tbody tr").filter({ hasText: from });
    await row.getByRole("button", { name: "New key" }).locator("visible=true").click();
  }
  await page.getByRole("dialog", { name: "Generate a key" }).waitFor();
}

describe.skipIf(skipReason !== undefined)(`the operator's console in Chromium ${skipReason ?? ""}`, () => {
  ctx = useBrowserConsole(undefined, { chat: false }, async () => {
    page = ctx.page;
    await ctx.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: ctx.stack.url });
    await ctx.stack.admin.newUser({
      user_id: "dev-1",
      user_email: "dev@example.com",
      max_budget: 10,
      rpm_limit: 60,
    });
  });

  it("signs in with the master key, generates a key of no user, copies it, and the gateway accepts it", async () => {
    await page.goto(`${ctx.stack.url}/`);
    await page.getByRole("heading", { name: "Operator sign-in" }).waitFor();
    await page.getByLabel("Master key").fill(MASTER_KEY);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByTestId("user-table").waitFor();
    expect(new URL(page.url()).pathname).toBe("/admin");

    await openGenerate("toolbar");
    const dialog = page.getByRole("dialog", { name: "Generate a key" });
    await expect(dialog.getByLabel("User").inputValue()).resolves.toBe("");
    await dialog.getByLabel("Name").fill("operator-cli");
    await dialog.getByLabel("Requests per minute").fill("30");
    const violations = await shootBoth("admin-generate-dialog");
    await dialog.getByRole("button", { name: "Generate", exact: true }).click();

    const box = page.getByTestId("new-key");
    await box.waitFor();
    const shown = ((await box.textContent()) ?? "").trim();
    expect(shown).toMatch(/^sk-[0-9A-Za-z]{40}$/);
    await expect(page.getByTestId("snippet-curl").textContent()).resolves.toContain(`Bearer ${shown}`);
    violations.push(...(await shootBoth("admin-new-key")));
    await page.getByRole("button", { name: "Copy key" }).click();
    await page.getByRole("button", { name: "Copy key" }).getByText("Copied").waitFor();
    const copied = await page.evaluate<string>("navigator.clipboard.readText()");
    expect(copied).toBe(shown);

    const models = await fetch(`${ctx.stack.gateway.url}/v1/models`, {
      headers: { authorization: `Bearer ${copied}` },
    });
    expect(models.status).toBe(200);
    const { info } = await ctx.stack.admin.keyInfo(copied);
    expect(info).toMatchObject({ key_alias: "operator-cli", user_id: null, rpm_limit: 30 });
    const audit = (await ctx.stack.admin.auditLogs({ key_hash: info.token })).logs;
    expect(audit.map((r) => [r.actor, r.action])).toEqual([["console:operator:master-key", "key.generate"]]);

    await page.getByRole("button", { name: "I've saved it" }).click();
    await box.waitFor({ state: "detached" });
    expect(await page.content()).not.toContain(shown);
    expect(violations).toEqual([]);
  }, 120_000);

  it("generates a key for a listed user with that user's limits as hints; an unknown typed user is refused under the field", async () => {
    await page.goto(`${ctx.stack.url}/admin`);
    await openGenerate("dev@example.com");
    const dialog = page.getByRole("dialog", { name: "Generate a key" });
    await expect(dialog.getByLabel("User").inputValue()).resolves.toBe("dev-1");
    await expect(dialog.getByTestId("account-limits").textContent()).resolves.toContain("60 requests/min");
    await expect(dialog.getByLabel("Budget (USD, optional)").getAttribute("placeholder")).resolves.toBe(
      "up to $10.00",
    );
    await dialog.getByLabel("Name").fill("dev-laptop");
    await dialog.getByRole("button", { name: "Generate", exact: true }).click();
    const key = ((await page.getByTestId("new-key").textContent()) ?? "").trim();
    expect((await ctx.stack.admin.keyInfo(key)).info.user_id).toBe("dev-1");
    await page.getByRole("button", { name: "I've saved it" }).click();

    await openGenerate("toolbar");
    await dialog.getByLabel("User").fill("dev@"); // the list finds users by email too
    await page.getByRole("option", { name: "dev@example.com (dev-1)" }).waitFor();
    await dialog.getByLabel("User").fill("no-such-user");
    await dialog.getByLabel("Name").fill("ghost");
    await dialog.getByRole("button", { name: "Generate", exact: true }).click();
    await dialog.getByText('user_id "no-such-user" does not exist').waitFor();
    await expect(page.getByTestId("new-key").count()).resolves.toBe(0);
    await page.keyboard.press("Escape");
  }, 60_000);

  it("warns on a key from 80 % of its budget and says 'budget exhausted' from 100 %, in badge and bar", async () => {
    const spendOn = async (alias: string) => {
      const made = await ctx.stack.admin.generateKey({ user_id: "dev-1", key_alias: alias });
      await ctx.stack.gateway.clientWith(made.key).chat.completions.create({
        model: "general",
        messages: [{ role: "user", content: "spend a little" }],
      });
      let spend = 0;
      await waitFor(`the call of ${alias} booked`, async () => {
        spend = (await ctx.stack.admin.keyInfo(made.token)).info.spend;
        return spend > 0;
      });
      return { token: made.token, spend };
    };
    const warned = await spendOn("at-80");
    const spent = await spendOn("at-100");
    const calm = await spendOn("at-50");
    // Rounded down to 8 decimals: the share is 80 % or a hair above, never below.
    await ctx.stack.admin.updateKey({
      key: warned.token,
      max_budget: Math.floor((warned.spend / 0.8) * 1e8) / 1e8,
    });
    await ctx.stack.admin.updateKey({ key: spent.token, max_budget: spent.spend });
    await ctx.stack.admin.updateKey({ key: calm.token, max_budget: calm.spend * 2 });

    await page.goto(`${ctx.stack.url}/admin`);
    const row = page.getByTestId("user-table").locator("tbody tr").filter({ hasText: "dev@example.com" });
    await row.getByRole("button", { name: "Keys" }).locator("visible=true").click();
    const dialog = page.getByRole("dialog", { name: "Keys of dev@example.com" });
    const keyRow = (alias: string) => dialog.getByTestId("key-row").filter({ hasText: alias });
    await keyRow("at-80").waitFor();
    await expect(keyRow("at-80").getByTestId("key-budget-warning").textContent()).resolves.toBe(
      "80 % of budget used",
    );
    await expect(keyRow("at-100").getByTestId("key-budget-warning").textContent()).resolves.toBe(
      "budget exhausted",
    );
    await expect(keyRow("at-50").getByTestId("key-budget-warning").count()).resolves.toBe(0);
    // The bar says the same: orange at 80 %, red and full when exhausted.
    const bar = (alias: string) => keyRow(alias).getByRole("progressbar");
    await expect(bar("at-80").getAttribute("aria-label")).resolves.toBe("Budget used: 80 %");
    await expect(bar("at-100").getAttribute("aria-valuenow")).resolves.toBe("100");
    const color = async (alias: string) =>
      /--progress-section-color:\s*var\(--mantine-color-([a-z]+)-/.exec(
        (await bar(alias).getAttribute("style")) ?? "",
      )?.[1];
    await expect(color("at-80")).resolves.toBe("orange");
    await expect(color("at-100")).resolves.toBe("red");
    await expect(color("at-50")).resolves.toBe("blue");
    // The whole table fits the dialog at 1440 px: Revoke is not scrolled out of sight.
    const overflow = await page.evaluate<number>(`(() => {
      const table = document.querySelector('[role="dialog"] [data-testid="key-table"]');
      const box = table.closest(".mantine-ScrollArea-viewport") ?? table.closest(".mantine-Table-scrollContainer");
      return box.scrollWidth - box.clientWidth;
    })()`);
    expect(overflow).toBeLessThanOrEqual(0);
    const found = await shootBoth("admin-user-keys");
    expect(found).toEqual([]);
    await page.keyboard.press("Escape");
    expect(await shootBoth("admin-operator")).toEqual([]);
  }, 90_000);
});
